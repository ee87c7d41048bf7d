// Reading a rollout back into a thread: its session metadata, then its turns
// from the event_msg records, and the model's context from the response_item
// records, each with the turn it was written in.
// Codex's legacy files (user_message / agent_message events only) read too.

#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"
#include "actors/store/action_lines.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/rollout_json.hpp"
#include "actors/store/response_items.hpp"
#include "actors/store/turn_items.hpp"
#include "protocol/ids.hpp"

namespace parley::store {

// As in turn_items.cpp and action_lines.cpp: in the unnamed namespace, clang's
// -Wshadow takes their alias for a second one when they share a unity TU.
using json = nlohmann::json;
using namespace rollout_json;

namespace {

protocol::turn_error error_of(const json& e) {
  protocol::turn_error err;
  err.message = str_of(e, "message", "turn failed");
  if (auto i = e.find("codex_error_info"); i != e.end() && i->is_string()) {
    // snake_case on disk, camelCase on the wire
    std::string s = i->get<std::string>(), camel;
    bool up = false;
    for (char ch : s) {
      if (ch == '_') {
        up = true;
      } else {
        camel += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
        up = false;
      }
    }
    err.codex_error_info = camel;
  }
  return err;
}

/// A turn being rebuilt. Items from item_completed records win over the
/// legacy user_message / agent_message events of the same kind; the others
/// keep the order they were written in (a message said before a command
/// stays before it: the model's history depends on it).
struct turn_builder {
  struct recorded {
    protocol::thread_item item;
    bool legacy = false;
  };
  protocol::turn turn;
  std::vector<recorded> items;
  bool completed_user = false, completed_agent = false;
  bool explicit_start = false;
  /// The action that had not ended (its item not completed).
  std::optional<action_record> pending;

  protocol::turn finish() {
    for (auto& r : items) {
      bool user = std::holds_alternative<protocol::user_message_item>(r.item);
      if (r.legacy && ((user && completed_user) || (!user && completed_agent))) continue;
      turn.items.push_back(std::move(r.item));
    }
    return std::move(turn);
  }
};

/// Rebuilds the turns of a rollout, one event_msg record at a time.
class turn_decoder {
 public:
  turn_decoder(protocol::thread& t, std::vector<context_item>& context,
               std::vector<std::string>& compacted_turns, std::optional<action_record>& pending,
               std::optional<protocol::thread_goal>& goal)
      : t_(t), context_(context), compacted_turns_(compacted_turns), pending_(pending),
        goal_(goal) {}

  void on_record(size_t index, const json& record) {
    auto kind = str_of(record, "type", "");
    if (kind == action_line_type) return on_action(record);
    if (kind == "compacted") return on_compacted(record);
    if (kind == git_info_line_type) return on_git_info(record);
    if (kind == injected_line_type) return on_injected(record);
    if (kind == reverted_line_type) return on_reverted(record);
    if (kind != "event_msg" && kind != "response_item") return;
    auto pi = record.find("payload");
    if (pi == record.end() || !pi->is_object()) return;
    const auto& p = *pi;
    if (kind == "response_item") return on_response_item(p);
    if (auto ts = parse_rfc3339_ms(str_of(record, "timestamp", "")); ts / 1000 > t_.updated_at)
      t_.updated_at = ts / 1000;
    auto type = str_of(p, "type", "");
    if (type == "task_started") return on_task_started(index, p);
    if (type == "user_message") return on_user_message(index, p);
    if (type == "agent_message") return on_agent_message(index, p);
    if (type == "item_completed") return on_item_completed(index, p);
    if (type == "task_complete" || type == "turn_aborted") return on_turn_end(type, p);
    if (type == "thread_name_updated") t_.name = opt_str(p, "thread_name");
    if (type == "thread_goal_updated") on_goal(p);
    if (type == "thread_goal_cleared") goal_.reset();
  }

  /// The end of the file: an explicit turn that never ended was cut off,
  /// unless an action of it is pending (it goes on once loaded).
  void finish() {
    if (!open_) return;
    if (open_->explicit_start && open_->pending) {
      pending_ = std::move(open_->pending);
      return close_turn(protocol::turn_status::in_progress);
    }
    close_turn(open_->explicit_start ? protocol::turn_status::interrupted
                                     : protocol::turn_status::completed);
  }

  /// Context written outside any turn and never followed by one stays
  /// before every turn.
  void finish_context() {
    for (auto& item : unclaimed_) context_.push_back(context_item{"", std::move(item)});
    unclaimed_.clear();
  }

 private:
  /// Context between turns belongs to the next turn that opens (a legacy
  /// file's context precedes its first event), unless a client injected it
  /// (thread/inject_items): then it follows the turn it was injected after.
  void on_response_item(const json& p) {
    if (injecting_ > 0) {
      --injecting_;
      auto after = open_ ? open_->turn.id : t_.turns.empty() ? std::string{} : t_.turns.back().id;
      context_.push_back(context_item{after, p, true});
      return;
    }
    if (open_)
      context_.push_back(context_item{open_->turn.id, p});
    else
      unclaimed_.push_back(p);
  }

  /// A compaction: the context so far is replaced (Codex's `compacted`
  /// line; without a replacement history, as older Codex wrote it, the
  /// summary message alone stands for it).
  void on_compacted(const json& record) {
    auto pi = record.find("payload");
    if (pi == record.end() || !pi->is_object()) return;
    std::vector<json> replacement;
    auto ri = pi->find("replacement_history");
    if (ri != pi->end() && ri->is_array()) {
      for (const auto& item : *ri)
        if (item.is_object()) replacement.push_back(item);
    } else {
      replacement.push_back(compaction_summary_item(str_of(*pi, "message", "")));
    }
    unclaimed_.clear();
    std::vector<std::string> ids;
    for (const auto& t : t_.turns) ids.push_back(t.id);
    auto turn_id = open_ ? open_->turn.id : std::string{};
    if (open_) ids.push_back(turn_id);
    compact_context(context_, compacted_turns_, ids, turn_id, std::move(replacement));
  }

  /// The thread's Git metadata now (thread/metadata/update).
  void on_git_info(const json& record) {
    auto payload = object_of(record, "payload");
    auto g = payload.find("git");
    if (g == payload.end() || !g->is_object()) {
      t_.git.reset();
      return;
    }
    try {
      t_.git = protocol::decode<protocol::git_info>(*g);
    } catch (const protocol::decode_error&) {
    }
  }

  /// The next `items` response_item lines were injected by a client.
  void on_injected(const json& record) {
    injecting_ = opt_int(object_of(record, "payload"), "items").value_or(0);
  }

  /// A revert rewrote the file: the thread changed then.
  void on_reverted(const json& record) {
    if (auto ts = parse_rfc3339_ms(str_of(record, "timestamp", "")); ts / 1000 > t_.updated_at)
      t_.updated_at = ts / 1000;
  }

  void opened() {
    for (auto& item : unclaimed_) context_.push_back(context_item{open_->turn.id, std::move(item)});
    unclaimed_.clear();
  }

  void close_turn(protocol::turn_status status) {
    if (!open_) return;
    open_->turn.status = status;
    t_.turns.push_back(open_->finish());
    open_.reset();
  }

  /// The turn records belong to; legacy files have no task_started.
  turn_builder& current(size_t index) {
    if (!open_) {
      open_.emplace();
      open_->turn.id = "rollout-" + std::to_string(index);
      opened();
    }
    return *open_;
  }

  /// A phase of an action of the open turn: the latest one stands.
  void on_action(const json& record) {
    auto a = action_of_payload(object_of(record, "payload"));
    if (!a || !open_ || open_->turn.id != a->turn_id) return;
    // A request whose outcome is with the model: nothing is pending.
    if (a->at == action_record::phase::done) return open_->pending.reset();
    open_->pending = std::move(*a);
  }

  void on_task_started(size_t index, const json& p) {
    // An open implicit turn ends here; an explicit one that never ended was
    // cut off (a later turn started: whatever it had pending is over).
    if (open_) open_->pending.reset();
    finish();
    open_.emplace();
    open_->explicit_start = true;
    open_->turn.id = str_of(p, "turn_id", "rollout-" + std::to_string(index));
    open_->turn.started_at = opt_int(p, "started_at");
    opened();
  }

  void on_user_message(size_t index, const json& p) {
    protocol::user_message_item u;
    u.id = "item-" + std::to_string(++items_);
    u.content.push_back(protocol::user_input::make_text(str_of(p, "message", "")));
    if (t_.preview.empty()) t_.preview = str_of(p, "message", "");
    current(index).items.push_back({std::move(u), true});
  }

  void on_agent_message(size_t index, const json& p) {
    protocol::agent_message_item a;
    a.id = "item-" + std::to_string(++items_);
    a.text = str_of(p, "message", "");
    a.phase = opt_str(p, "phase");
    current(index).items.push_back({std::move(a), true});
  }

  void on_item_completed(size_t index, const json& p) {
    auto item = p.find("item");
    if (item == p.end() || !item->is_object()) return;
    auto converted = item_of_turn_item(*item);
    if (!converted) return;
    auto& b = current(index);
    if (auto* u = std::get_if<protocol::user_message_item>(&*converted)) {
      b.completed_user = true;
      if (t_.preview.empty()) t_.preview = protocol::joined_text(u->content);
    }
    if (std::holds_alternative<protocol::agent_message_item>(*converted)) b.completed_agent = true;
    if (b.pending && b.pending->item_id == protocol::item_id(*converted)) b.pending.reset();
    b.items.push_back({std::move(*converted), false});
  }

  void on_turn_end(const std::string& type, const json& p) {
    if (!open_) return;
    open_->turn.completed_at = opt_int(p, "completed_at");
    open_->turn.duration_ms = opt_int(p, "duration_ms");
    if (!open_->turn.started_at) open_->turn.started_at = opt_int(p, "started_at");
    if (type == "turn_aborted") return close_turn(protocol::turn_status::interrupted);
    if (auto e = p.find("error"); e != p.end() && e->is_object()) {
      open_->turn.error = error_of(*e);
      return close_turn(protocol::turn_status::failed);
    }
    close_turn(protocol::turn_status::completed);
  }

  /// A goal as Codex writes its update; one that cannot be read is left as
  /// it was (the rollout's other records still count).
  void on_goal(const json& p) {
    auto g = p.find("goal");
    if (g == p.end() || !g->is_object()) return;
    try {
      goal_ = protocol::decode<protocol::thread_goal>(*g);
    } catch (const protocol::decode_error&) {
    }
  }

  protocol::thread& t_;
  std::vector<context_item>& context_;
  std::vector<std::string>& compacted_turns_;
  std::optional<action_record>& pending_;
  std::optional<protocol::thread_goal>& goal_;
  std::vector<json> unclaimed_;  // context seen while no turn was open
  int64_t injecting_ = 0;       // response_item lines still to come of an injection
  std::optional<turn_builder> open_;
  int items_ = 0;
};

/// The thread's metadata from a session_meta line that
/// session_meta_problem() accepts.
protocol::thread read_session_meta(const json& first, const std::string& path) {
  const auto& m = first["payload"];
  protocol::thread t;
  t.id = str_of(m, "id", "");
  t.created_at = parse_rfc3339_ms(str_of(m, "timestamp", str_of(first, "timestamp"))) / 1000;
  t.updated_at = t.created_at;
  t.cwd = str_of(m, "cwd", "");
  t.cli_version = str_of(m, "cli_version", "");
  if (auto s = opt_str(m, "source")) t.source = *s;
  t.model_provider = str_of(m, "model_provider", "openai");
  t.forked_from_id = opt_str(m, "forked_from_id");
  t.tenant = str_of(m, "tenant", "");
  if (auto d = m.find("dynamic_tools"); d != m.end() && d->is_array()) t.dynamic_tools = *d;
  t.path = path;
  t.status = protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};
  return t;
}

}  // namespace

std::optional<std::string> session_meta_problem(const std::string& line) {
  auto first = json::parse(line, nullptr, false);
  if (first.is_discarded() || !first.is_object())
    return "not JSON (a rollout starts with session metadata)";
  if (str_of(first, "type", "") != "session_meta" || !first.contains("payload")
      || !first["payload"].is_object())
    return "it does not start with session metadata";
  if (!protocol::is_uuid(str_of(first["payload"], "id", "")))
    return "session metadata has no valid id";
  return std::nullopt;
}

caf::expected<stored_thread> decode_rollout(const std::vector<std::string>& lines,
                                            const std::string& path, size_t first_line) {
  auto fail = [&path](const std::string& why) {
    return make_error(errc::invalid_request, "failed to read rollout `" + path + "`: " + why);
  };
  if (lines.empty()) return fail("the file is empty");
  if (auto why = session_meta_problem(lines.front()))
    return fail("line " + std::to_string(first_line) + ": " + *why);
  stored_thread out;
  out.meta = read_session_meta(json::parse(lines.front(), nullptr, false), path);
  turn_decoder decoder{out.meta, out.context, out.compacted_turns, out.pending, out.goal};
  for (size_t i = 1; i < lines.size(); ++i) {
    auto record = json::parse(lines[i], nullptr, false);
    if (!record.is_discarded() && record.is_object()) decoder.on_record(i, record);
  }
  decoder.finish();
  decoder.finish_context();
  return out;
}

caf::expected<stored_thread> read_rollout(const std::string& path) {
  if (auto err = validate_rollout_path(path)) return err;
  auto data = read_rollout_bytes(path);
  if (!data) return std::move(data.error());
  bool torn = false;
  auto lines = split_rollout_lines(*data, &torn);
  if (torn) PARLEY_WARN("store event=torn_last_line path={} skipped", path);
  // Empty lines are not lines to the reader; messages count them all.
  auto first_line = 1 + std::min(data->find_first_not_of('\n'), data->size());
  return decode_rollout(lines, path, first_line);
}

}  // namespace parley::store
