#include "protocol/thread_extras.hpp"

#include <algorithm>
#include <array>

namespace parley::protocol {

namespace {

constexpr std::array<const char*, 6> goal_statuses{"active",        "paused",        "blocked",
                                                   "usageLimited", "budgetLimited", "complete"};

/// The item anchor of thread/items/list's cursor, as "anchor:<itemId>".
std::string decode_items_cursor(const json& c) {
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_object()) throw_invalid_type(c, "a string or an item anchor");
  auto type = required<std::string>(c, "type");
  if (type != "item") throw_unknown_variant(type, {"item"});
  return "anchor:" + required<std::string>(c, "itemId");
}

}  // namespace

void from_json(const json& j, thread_items_list_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.turn_id = optional<std::string>(j, "turnId");
  if (auto c = j.find("cursor"); c != j.end() && !c->is_null()) x.cursor = decode_items_cursor(*c);
  x.limit = optional<uint32_t>(j, "limit");
  if (auto dir = optional<std::string>(j, "sortDirection")) {
    if (*dir != "asc" && *dir != "desc") throw_unknown_variant(*dir, {"asc", "desc"});
    x.ascending = *dir == "asc";
  }
}

void to_json(json& j, const thread_item_entry& x) {
  // Item times are not stored by parley: null, as the schema allows.
  j = json{{"turnId", x.turn_id}, {"item", x.item}, {"startedAtMs", nullptr},
           {"completedAtMs", nullptr}};
}

void to_json(json& j, const thread_items_list_response& x) {
  j = json{{"data", x.data},
           {"nextCursor", or_null(x.next_cursor)},
           {"backwardsCursor", or_null(x.backwards_cursor)}};
}

bool is_goal_status(const std::string& s) {
  return std::find(goal_statuses.begin(), goal_statuses.end(), s) != goal_statuses.end();
}

void to_json(json& j, const thread_goal& x) {
  j = json{{"threadId", x.thread_id},
           {"objective", x.objective},
           {"status", x.status},
           {"tokenBudget", or_null(x.token_budget)},
           {"tokensUsed", x.tokens_used},
           {"timeUsedSeconds", x.time_used_seconds},
           {"createdAt", x.created_at},
           {"updatedAt", x.updated_at}};
}

void from_json(const json& j, thread_goal& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.objective = required<std::string>(j, "objective");
  x.status = required<std::string>(j, "status");
  x.token_budget = optional<int64_t>(j, "tokenBudget");
  x.tokens_used = optional<int64_t>(j, "tokensUsed").value_or(0);
  x.time_used_seconds = optional<int64_t>(j, "timeUsedSeconds").value_or(0);
  x.created_at = optional<int64_t>(j, "createdAt").value_or(0);
  x.updated_at = optional<int64_t>(j, "updatedAt").value_or(0);
}

void from_json(const json& j, thread_goal_set_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.objective = optional<std::string>(j, "objective");
  x.status = optional<std::string>(j, "status");
  if (x.status && !is_goal_status(*x.status))
    throw_unknown_variant(*x.status, {"active", "paused", "blocked", "usageLimited",
                                      "budgetLimited", "complete"});
  x.token_budget_given = j.contains("tokenBudget");
  x.token_budget = optional<int64_t>(j, "tokenBudget");
  if (auto origin = optional<std::string>(j, "origin"))
    if (*origin != "user" && *origin != "automatic")
      throw_unknown_variant(*origin, {"user", "automatic"});
}

// -- thread/metadata/update ---------------------------------------------------

namespace metadata_detail {

field_patch patch_of(const json& obj, const char* key) {
  field_patch f;
  auto i = obj.find(key);
  if (i == obj.end()) return f;
  f.given = true;
  if (!i->is_null()) f.value = decode<std::string>(*i);
  return f;
}

std::string trimmed(const std::string& s) {
  auto first = s.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string::npos) return {};
  auto last = s.find_last_not_of(" \t\r\n\f\v");
  return s.substr(first, last - first + 1);
}

/// Trims a field set to a string; false when nothing is left of it.
bool trim_field(field_patch& f) {
  if (!f.value) return true;
  *f.value = trimmed(*f.value);
  return !f.value->empty();
}

void apply(std::optional<std::string>& field, const field_patch& f) {
  if (f.given) field = f.value;
}

}  // namespace metadata_detail

void from_json(const json& j, thread_metadata_update_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  auto g = j.find("gitInfo");
  if (g == j.end() || g->is_null()) return;
  if (!g->is_object()) throw_invalid_type(*g, "struct ThreadMetadataGitInfoUpdateParams");
  git_info_patch patch;
  patch.sha = metadata_detail::patch_of(*g, "sha");
  patch.branch = metadata_detail::patch_of(*g, "branch");
  patch.origin_url = metadata_detail::patch_of(*g, "originUrl");
  x.git = std::move(patch);
}

std::optional<std::string> check_metadata_update(thread_metadata_update_params& p) {
  using metadata_detail::trim_field;
  if (!p.git) return std::string{"thread metadata update must include at least one field"};
  auto& g = *p.git;
  if (!g.sha.given && !g.branch.given && !g.origin_url.given)
    return std::string{"gitInfo must include at least one field"};
  if (!trim_field(g.sha)) return std::string{"gitInfo.sha must not be empty"};
  if (!trim_field(g.branch)) return std::string{"gitInfo.branch must not be empty"};
  if (!trim_field(g.origin_url)) return std::string{"gitInfo.originUrl must not be empty"};
  return std::nullopt;
}

std::optional<git_info> patched(const std::optional<git_info>& now, const git_info_patch& patch) {
  auto out = now.value_or(git_info{});
  metadata_detail::apply(out.sha, patch.sha);
  metadata_detail::apply(out.branch, patch.branch);
  metadata_detail::apply(out.origin_url, patch.origin_url);
  if (!out.sha && !out.branch && !out.origin_url) return std::nullopt;
  return out;
}

// -- thread/revert -------------------------------------------------------------

void from_json(const json& j, thread_revert_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.before_turn_id = required<std::string>(j, "beforeTurnId");
}

// -- thread/inject_items ---------------------------------------------------------

void from_json(const json& j, thread_inject_items_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.items = required<std::vector<json>>(j, "items");
}

namespace inject_detail {

/// serde's word for the kind of a value where a tag was expected.
const char* kind_word(const json& j) {
  if (j.is_number()) return "number";
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "boolean";
  if (j.is_array()) return "sequence";
  return "map";
}

std::optional<std::string> missing(const json& item, std::initializer_list<const char*> fields) {
  for (const auto* f : fields)
    if (!item.contains(f)) return "missing field `" + std::string{f} + "`";
  return std::nullopt;
}

std::optional<std::string> message_problem(const json& item) {
  if (auto why = missing(item, {"role", "content"})) return why;
  const auto& role = item["role"];
  if (!role.is_string()) return "invalid type: " + describe_value(role) + ", expected a string";
  const auto& content = item["content"];
  if (!content.is_array())
    return "invalid type: " + describe_value(content) + ", expected a sequence";
  for (const auto& part : content) {
    auto type = part.is_object() ? part.find("type") : part.end();
    if (!part.is_object() || type == part.end() || !type->is_string())
      return std::string{"invalid content item: expected an object with a `type`"};
    auto t = type->get<std::string>();
    if (t != "input_text" && t != "input_image" && t != "input_audio" && t != "output_text")
      return "unknown variant `" + t
             + "`, expected one of `input_text`, `input_image`, `input_audio`, `output_text`";
  }
  return std::nullopt;
}

/// Why `item` is not a Responses API item, or nothing: Codex's checks of
/// the kinds a model's history holds most (messages, tool calls and their
/// outputs); a kind it does not know passes, as it does in Codex.
std::optional<std::string> problem_of(const json& item) {
  if (item.is_array() && !item.empty() && !item.front().is_string())
    return "invalid type: " + std::string{kind_word(item.front())} + ", expected variant identifier";
  if (!item.is_object())
    return "invalid type: " + describe_value(item) + ", expected internally tagged enum ResponseItem";
  auto type = item.find("type");
  if (type == item.end()) return std::string{"missing field `type`"};
  if (!type->is_string())
    return "invalid type: " + std::string{kind_word(*type)} + ", expected variant identifier";
  auto t = type->get<std::string>();
  if (t == "message") return message_problem(item);
  if (t == "function_call") return missing(item, {"name", "arguments", "call_id"});
  if (t == "function_call_output") return missing(item, {"call_id", "output"});
  return std::nullopt;
}

}  // namespace inject_detail

std::optional<std::string> check_inject_items(const thread_inject_items_params& p) {
  if (p.items.empty()) return std::string{"items must not be empty"};
  for (size_t i = 0; i < p.items.size(); ++i)
    if (auto why = inject_detail::problem_of(p.items[i]))
      return "items[" + std::to_string(i) + "] is not a valid response item: " + *why;
  return std::nullopt;
}

}  // namespace parley::protocol
