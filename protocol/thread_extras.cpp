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

}  // namespace parley::protocol
