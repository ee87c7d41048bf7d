#include "actors/store/rollout_format.hpp"

#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"
#include "actors/store/action_lines.hpp"
#include "actors/store/response_items.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/turn_items.hpp"
#include "protocol/ids.hpp"

namespace parley::store {

using json = nlohmann::json;
using protocol::dump_line;

namespace {

/// Every line of one record carries the record's one time, and the stamp
/// notes whether a line a reader dates the thread by (an event) was written:
/// the store's metadata then says the updated_at a reader computes.
std::string line(line_stamp& stamp, const char* type, json payload) {
  if (std::strcmp(type, "event_msg") == 0) stamp.dated = true;
  return dump_line(json{{"timestamp", rfc3339_ms(stamp.at_ms)},
                        {"type", type},
                        {"payload", std::move(payload)}});
}

std::string event(line_stamp& stamp, json payload) {
  return line(stamp, "event_msg", std::move(payload));
}

std::string response_item(line_stamp& stamp, json payload) {
  return line(stamp, "response_item", std::move(payload));
}

/// A thread item as rollout lines: its event, and the response items the
/// model sees it as (a user message's first, as Codex writes them).
std::vector<std::string> encode_item(line_stamp& stamp, const protocol::thread& meta,
                                     const std::string& turn_id,
                                     const protocol::thread_item& item, bool derive_context) {
  std::vector<std::string> out;
  auto context = derive_context ? response_items_of(item) : std::vector<json>{};
  bool user = std::holds_alternative<protocol::user_message_item>(item);
  if (user)
    for (auto& r : context) out.push_back(response_item(stamp, std::move(r)));
  if (auto* u = std::get_if<protocol::user_message_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "user_message"},
                             {"message", protocol::joined_text(u->content)},
                             {"images", json::array()},
                             {"local_images", json::array()},
                             {"text_elements", json::array()}}));
  } else if (auto* a = std::get_if<protocol::agent_message_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "agent_message"},
                             {"message", a->text},
                             {"phase", protocol::or_null(a->phase)},
                             {"memory_citation", nullptr}}));
  } else if (auto* c = std::get_if<protocol::command_execution_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "item_completed"},
                             {"thread_id", meta.id},
                             {"turn_id", turn_id},
                             {"item", turn_item_of(*c)}}));
  } else if (auto* f = std::get_if<protocol::file_change_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "item_completed"},
                             {"thread_id", meta.id},
                             {"turn_id", turn_id},
                             {"item", turn_item_of(*f)}}));
  } else if (auto* e = std::get_if<protocol::entered_review_mode_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "item_completed"},
                             {"thread_id", meta.id},
                             {"turn_id", turn_id},
                             {"item", json{{"type", "EnteredReviewMode"},
                                           {"id", e->id},
                                           {"target", e->target},
                                           {"user_facing_hint", e->review}}}}));
  } else if (auto* x = std::get_if<protocol::exited_review_mode_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "item_completed"},
                             {"thread_id", meta.id},
                             {"turn_id", turn_id},
                             {"item", json{{"type", "ExitedReviewMode"},
                                           {"id", x->id},
                                           {"review_output", x->output}}}}));
  } else if (auto* d = std::get_if<protocol::dynamic_tool_call_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "item_completed"},
                             {"thread_id", meta.id},
                             {"turn_id", turn_id},
                             {"item", turn_item_of(*d)}}));
  } else if (auto* m = std::get_if<protocol::mcp_tool_call_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "item_completed"},
                             {"thread_id", meta.id},
                             {"turn_id", turn_id},
                             {"item", turn_item_of(*m)}}));
  } else if (auto* k = std::get_if<protocol::context_compaction_item>(&item)) {
    out.push_back(event(stamp, json{{"type", "item_completed"},
                             {"thread_id", meta.id},
                             {"turn_id", turn_id},
                             {"item", json{{"type", "ContextCompaction"}, {"id", k->id}}}}));
  }
  if (!user)
    for (auto& r : context) out.push_back(response_item(stamp, std::move(r)));
  return out;
}

std::string end_of_turn(line_stamp& stamp, const protocol::turn& t) {
  json p{{"turn_id", t.id},
         {"started_at", protocol::or_null(t.started_at)},
         {"completed_at", protocol::or_null(t.completed_at)},
         {"duration_ms", protocol::or_null(t.duration_ms)}};
  if (t.status == protocol::turn_status::interrupted) {
    p["type"] = "turn_aborted";
    p["reason"] = "interrupted";
    return event(stamp, std::move(p));
  }
  p["type"] = "task_complete";
  std::optional<std::string> last;
  for (auto& i : t.items)
    if (auto* a = std::get_if<protocol::agent_message_item>(&i)) last = a->text;
  p["last_agent_message"] = protocol::or_null(last);
  if (t.status == protocol::turn_status::failed) {
    auto message = t.error ? t.error->message : std::string{"turn failed"};
    p["error"] = json{{"message", message}, {"codex_error_info", "other"}};
  }
  return event(stamp, std::move(p));
}

}  // namespace

std::string rfc3339_ms(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03dZ", static_cast<int>(unix_ms % 1000));
  return std::string{buf} + ms;
}

int64_t parse_rfc3339_ms(const std::string& text) {
  std::tm tm{};
  int ms = 0;
  if (text.size() < 19) return 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec)
      != 6)
    return 0;
  if (text.size() > 20 && text[19] == '.') {
    std::string frac;
    for (size_t i = 20; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
      frac += text[i];
    while (frac.size() < 3) frac += '0';
    ms = std::stoi(frac.substr(0, 3));
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(::timegm(&tm)) * 1000 + ms;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty()
                 && a.find_first_not_of(
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")
                        == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

std::string path_to_file_uri(const std::string& path) {
  std::string out = "file://";
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~!$&'()*+,;=:@", c) != nullptr) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xF];
    }
  }
  return out;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// A rollout is read from disk, so its URI may be anything: an escape that is
// not '%' and two hex digits is kept as written (std::stoi threw on "%v/",
// found by rollout_fuzzer, and took "%-1" for a byte).
std::string file_uri_to_path(const std::string& uri) {
  if (uri.rfind("file://", 0) != 0) return uri;
  std::string out;
  for (size_t i = 7; i < uri.size(); ++i) {
    int high = -1, low = -1;
    if (uri[i] == '%' && i + 2 < uri.size()) {
      high = hex_digit(uri[i + 1]);
      low = hex_digit(uri[i + 2]);
    }
    if (high >= 0 && low >= 0) {
      out += static_cast<char>(high * 16 + low);
      i += 2;
    } else {
      out += uri[i];
    }
  }
  return out;
}

std::string encode_session_meta(const protocol::thread& meta) {
  json p{{"id", meta.id},
         {"timestamp", rfc3339_ms(meta.created_at * 1000)},
         {"cwd", meta.cwd},
         {"originator", "parley"},
         {"cli_version", meta.cli_version},
         {"source", meta.source},
         {"model_provider", meta.model_provider}};
  if (meta.forked_from_id) p["forked_from_id"] = *meta.forked_from_id;
  // Whose the thread is (issue 22); a rollout without it is the default tenant's.
  if (!meta.tenant.empty()) p["tenant"] = meta.tenant;
  // As Codex keeps a thread's client tools: with its session.
  if (meta.dynamic_tools.is_array() && !meta.dynamic_tools.empty())
    p["dynamic_tools"] = meta.dynamic_tools;
  return dump_line(json{{"timestamp", rfc3339_ms(meta.created_at * 1000)},
                        {"type", "session_meta"},
                        {"payload", std::move(p)}});
}

std::vector<std::string> encode_record(const protocol::thread& meta, const store_record& record,
                                       line_stamp& stamp) {
  std::vector<std::string> out;
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, thread_created_record>) {
          out.push_back(encode_session_meta(r.meta));
        } else if constexpr (std::is_same_v<T, turn_started_record>) {
          out.push_back(event(stamp, json{{"type", "task_started"},
                                   {"turn_id", r.turn_id},
                                   {"started_at", r.started_at},
                                   {"model_context_window", nullptr},
                                   {"collaboration_mode_kind", "default"}}));
        } else if constexpr (std::is_same_v<T, item_record>) {
          out = encode_item(stamp, meta, r.turn_id, r.item, r.derive_context);
        } else if constexpr (std::is_same_v<T, context_record>) {
          for (auto& item : r.items) out.push_back(response_item(stamp, item));
        } else if constexpr (std::is_same_v<T, turn_completed_record>) {
          out.push_back(end_of_turn(stamp, r.turn));
        } else if constexpr (std::is_same_v<T, action_record>) {
          out.push_back(line(stamp, action_line_type, action_payload(r)));
        } else if constexpr (std::is_same_v<T, compacted_record>) {
          // Codex's own line: a resumed Codex starts from the replacement.
          out.push_back(line(stamp, "compacted", json{{"message", r.message},
                                               {"replacement_history", r.replacement}}));
        } else if constexpr (std::is_same_v<T, thread_renamed_record>) {
          out.push_back(event(stamp, json{{"type", "thread_name_updated"},
                                   {"thread_id", meta.id},
                                   {"thread_name", protocol::or_null(r.name)}}));
        } else if constexpr (std::is_same_v<T, git_info_record>) {
          out.push_back(
              line(stamp, git_info_line_type, json{{"git", protocol::or_null(r.git)}}));
        } else if constexpr (std::is_same_v<T, injected_record>) {
          // The items as Codex writes injected ones (response_item lines),
          // after a line that tells parley's reader they follow the turn
          // before them.
          out.push_back(line(stamp, injected_line_type, json{{"items", r.items.size()}}));
          for (auto& item : r.items) out.push_back(response_item(stamp, item));
        } else if constexpr (std::is_same_v<T, goal_record>) {
          // As Codex writes a goal's update; Codex writes nothing when a
          // goal is cleared, parley writes that the goal is gone.
          if (r.goal) {
            json goal = *r.goal;
            if (!r.goal->token_budget) goal.erase("tokenBudget");  // as Codex leaves it out
            out.push_back(event(stamp, json{{"type", "thread_goal_updated"}, {"threadId", meta.id},
                                     {"goal", std::move(goal)}}));
          } else {
            out.push_back(
                event(stamp, json{{"type", "thread_goal_cleared"}, {"threadId", meta.id}}));
          }
        }
      },
      record);
  return out;
}

std::vector<std::string> encode_record(const protocol::thread& meta, const store_record& record) {
  line_stamp stamp{protocol::unix_ms()};
  return encode_record(meta, record, stamp);
}

std::string encode_reverted(const std::string& before_turn_id, size_t dropped_turns) {
  line_stamp stamp{protocol::unix_ms()};
  return line(stamp, reverted_line_type,
              json{{"before_turn_id", before_turn_id}, {"dropped_turns", dropped_turns}});
}

std::vector<std::string> encode_thread(const protocol::thread& meta,
                                       const std::vector<context_item>& context) {
  std::vector<std::string> out{encode_session_meta(meta)};
  auto append = [&](const store_record& r) {
    for (auto& l : encode_record(meta, r)) out.push_back(std::move(l));
  };
  auto context_of = [&](const std::string& turn_id) {
    context_record r{turn_id, {}};
    for (auto& c : context)
      if (c.turn_id == turn_id && !c.injected) r.items.push_back(c.item);
    return r;
  };
  auto injected_after = [&](const std::string& turn_id) {
    injected_record r;
    for (auto& c : context)
      if (c.turn_id == turn_id && c.injected) r.items.push_back(c.item);
    return r;
  };
  if (meta.name) append(thread_renamed_record{meta.name});
  if (meta.git) append(git_info_record{meta.git});
  if (auto before = context_of(""); !before.items.empty()) append(before);
  if (auto early = injected_after(""); !early.items.empty()) append(early);
  for (auto& t : meta.turns) {
    append(turn_started_record{t.id, t.started_at.value_or(meta.created_at)});
    // A turn with context of its own keeps it verbatim; otherwise its items
    // stand for it.
    auto own = context_of(t.id);
    for (auto& i : t.items) append(item_record{t.id, i, own.items.empty()});
    if (!own.items.empty()) append(own);
    if (t.status != protocol::turn_status::in_progress) append(turn_completed_record{t});
    if (auto later = injected_after(t.id); !later.items.empty()) append(later);
  }
  return out;
}

}  // namespace parley::store
