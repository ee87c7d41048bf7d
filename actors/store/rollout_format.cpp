#include "actors/store/rollout_format.hpp"

#include <ctime>
#include <nlohmann/json.hpp>

#include "actors/core/log.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/core/errors.hpp"
#include "protocol/ids.hpp"

namespace parley::store {

using json = nlohmann::json;
using protocol::dump_line;

namespace {

// Fields of the wrong type are skipped, as Codex's reader does: json::value()
// would throw on them (and take the store's I/O actor with it).
std::string str_of(const json& o, const char* key, const std::string& fallback = "") {
  if (!o.is_object()) return fallback;
  auto i = o.find(key);
  return i != o.end() && i->is_string() ? i->get<std::string>() : fallback;
}

json list_of(const json& o, const char* key) {
  auto i = o.is_object() ? o.find(key) : o.end();
  return i != o.end() && i->is_array() ? *i : json::array();
}

json object_of(const json& o, const char* key) {
  auto i = o.is_object() ? o.find(key) : o.end();
  return i != o.end() && i->is_object() ? *i : json::object();
}

std::string line(const char* type, json payload) {
  return dump_line(json{{"timestamp", rfc3339_ms(protocol::unix_ms())}, {"type", type},
                        {"payload", std::move(payload)}});
}

std::string event(json payload) { return line("event_msg", std::move(payload)); }

std::string response_item(json payload) { return line("response_item", std::move(payload)); }

json parsed_cmd(const protocol::command_action& a) {
  using kind = protocol::command_action::kind;
  switch (a.type) {
    case kind::read:
      return json{{"type", "read"}, {"cmd", a.command}, {"name", a.name.value_or("")},
                  {"path", a.path.value_or("")}};
    case kind::list_files:
      return json{{"type", "list_files"}, {"cmd", a.command}, {"path", protocol::or_null(a.path)}};
    case kind::search:
      return json{{"type", "search"}, {"cmd", a.command}, {"query", protocol::or_null(a.query)},
                  {"path", protocol::or_null(a.path)}};
    case kind::unknown:
      break;
  }
  return json{{"type", "unknown"}, {"cmd", a.command}};
}

protocol::command_action command_action_of(const json& p) {
  protocol::command_action a;
  a.command = str_of(p, "cmd", "");
  auto type = str_of(p, "type", "unknown");
  auto opt = [&](const char* k) -> std::optional<std::string> {
    auto i = p.find(k);
    return i != p.end() && i->is_string() ? std::optional<std::string>{i->get<std::string>()}
                                          : std::nullopt;
  };
  if (type == "read") {
    a.type = protocol::command_action::kind::read;
    a.name = opt("name");
    a.path = opt("path");
  } else if (type == "list_files") {
    a.type = protocol::command_action::kind::list_files;
    a.path = opt("path");
  } else if (type == "search") {
    a.type = protocol::command_action::kind::search;
    a.query = opt("query");
    a.path = opt("path");
  }
  return a;
}

/// The argv parley runs a command with (it is shown as its shell join).
std::vector<std::string> argv_of(const protocol::command_execution_item& c) {
  const std::string prefix = "/bin/sh -c ";
  if (c.command.rfind(prefix, 0) == 0 && !c.command_actions.empty())
    return {"/bin/sh", "-c", c.command_actions.front().command};
  return {"/bin/sh", "-c", c.command};
}

json turn_item_of(const protocol::command_execution_item& c) {
  json item{{"type", "CommandExecution"},
            {"id", c.id},
            {"command", argv_of(c)},
            {"cwd", path_to_file_uri(c.cwd)},
            {"source", "agent"},
            {"status", protocol::to_string(c.status)}};
  json parsed = json::array();
  for (auto& a : c.command_actions) parsed.push_back(parsed_cmd(a));
  item["parsed_cmd"] = std::move(parsed);
  if (c.process_id) item["process_id"] = *c.process_id;
  if (c.aggregated_output) item["aggregated_output"] = *c.aggregated_output;
  if (c.exit_code) item["exit_code"] = *c.exit_code;
  if (c.duration_ms)
    item["duration"] = json{{"secs", *c.duration_ms / 1000}, {"nanos", (*c.duration_ms % 1000) * 1'000'000}};
  return item;
}

/// A fileChange item as a FileChange TurnItem: changes keyed by path, in
/// Codex's FileChange shape (add/delete carry the content).
json turn_item_of(const protocol::file_change_item& f) {
  json changes = json::object();
  for (const auto& c : f.changes) {
    switch (c.type) {
      case protocol::file_update_change::kind::add:
        changes[c.path] = json{{"type", "add"}, {"content", c.diff}};
        break;
      case protocol::file_update_change::kind::remove:
        changes[c.path] = json{{"type", "delete"}, {"content", c.diff}};
        break;
      case protocol::file_update_change::kind::update:
        changes[c.path] = json{{"type", "update"},
                               {"unified_diff", c.diff},
                               {"move_path", protocol::or_null(c.move_path)}};
        break;
    }
  }
  return json{{"type", "FileChange"},
              {"id", f.id},
              {"changes", std::move(changes)},
              {"status", protocol::to_string(f.status)}};
}

std::vector<std::string> encode_item(const protocol::thread& meta, const std::string& turn_id,
                                     const protocol::thread_item& item) {
  std::vector<std::string> out;
  if (auto* u = std::get_if<protocol::user_message_item>(&item)) {
    auto text = protocol::joined_text(u->content);
    out.push_back(response_item(json{{"type", "message"}, {"role", "user"},
                                     {"content", json::array({{{"type", "input_text"}, {"text", text}}})}}));
    out.push_back(event(json{{"type", "user_message"}, {"message", text}, {"images", json::array()},
                             {"local_images", json::array()}, {"text_elements", json::array()}}));
  } else if (auto* a = std::get_if<protocol::agent_message_item>(&item)) {
    out.push_back(event(json{{"type", "agent_message"}, {"message", a->text},
                             {"phase", protocol::or_null(a->phase)}, {"memory_citation", nullptr}}));
    out.push_back(response_item(json{{"type", "message"}, {"role", "assistant"},
                                     {"content", json::array({{{"type", "output_text"}, {"text", a->text}}})}}));
  } else if (auto* c = std::get_if<protocol::command_execution_item>(&item)) {
    auto argv = argv_of(*c);
    out.push_back(response_item(json{{"type", "function_call"}, {"name", "shell"}, {"call_id", c->id},
                                     {"arguments", json{{"command", argv}}.dump()}}));
    out.push_back(event(json{{"type", "item_completed"}, {"thread_id", meta.id}, {"turn_id", turn_id},
                             {"item", turn_item_of(*c)}}));
    std::string output = c->status == protocol::item_status::declined
                             ? "rejected by user"
                             : "Process exited with code " + std::to_string(c->exit_code.value_or(-1))
                                   + "\nOutput:\n" + c->aggregated_output.value_or("");
    out.push_back(response_item(json{{"type", "function_call_output"}, {"call_id", c->id}, {"output", output}}));
  } else if (auto* f = std::get_if<protocol::file_change_item>(&item)) {
    out.push_back(event(json{{"type", "item_completed"}, {"thread_id", meta.id}, {"turn_id", turn_id},
                             {"item", turn_item_of(*f)}}));
  }
  return out;
}

std::string end_of_turn(const protocol::turn& t) {
  json p{{"turn_id", t.id},
         {"started_at", protocol::or_null(t.started_at)},
         {"completed_at", protocol::or_null(t.completed_at)},
         {"duration_ms", protocol::or_null(t.duration_ms)}};
  if (t.status == protocol::turn_status::interrupted) {
    p["type"] = "turn_aborted";
    p["reason"] = "interrupted";
    return event(std::move(p));
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
  return event(std::move(p));
}

// -- decoding ------------------------------------------------------------------

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

std::optional<int64_t> opt_int(const json& p, const char* key) {
  auto i = p.find(key);
  if (i != p.end() && i->is_number_integer()) return i->get<int64_t>();
  return std::nullopt;
}

std::optional<protocol::thread_item> item_of_turn_item(const json& item) {
  auto type = str_of(item, "type", "");
  if (type == "UserMessage") {
    protocol::user_message_item u;
    u.id = str_of(item, "id", "");
    for (auto& c : list_of(item, "content"))
      if (str_of(c, "type", "") == "text") u.content.push_back(protocol::user_input::make_text(str_of(c, "text", "")));
    return u;
  }
  if (type == "AgentMessage") {
    protocol::agent_message_item a;
    a.id = str_of(item, "id", "");
    for (auto& c : list_of(item, "content")) a.text += str_of(c, "text", "");
    return a;
  }
  if (type == "CommandExecution") {
    protocol::command_execution_item c;
    c.id = str_of(item, "id", "");
    std::vector<std::string> argv;
    for (auto& a : list_of(item, "command"))
      if (a.is_string()) argv.push_back(a.get<std::string>());
    c.command = shell_join(argv);
    c.cwd = file_uri_to_path(str_of(item, "cwd", ""));
    for (auto& p : list_of(item, "parsed_cmd")) c.command_actions.push_back(command_action_of(p));
    auto status = str_of(item, "status", "completed");
    c.status = status == "failed" ? protocol::item_status::failed
               : status == "declined" ? protocol::item_status::declined
                                      : protocol::item_status::completed;
    if (auto o = item.find("aggregated_output"); o != item.end() && o->is_string())
      c.aggregated_output = o->get<std::string>();
    if (auto e = opt_int(item, "exit_code")) c.exit_code = static_cast<int32_t>(*e);
    if (auto d = item.find("duration"); d != item.end() && d->is_object())
      c.duration_ms = d->value("secs", int64_t{0}) * 1000 + d->value("nanos", int64_t{0}) / 1'000'000;
    if (auto pid = item.find("process_id"); pid != item.end() && pid->is_string())
      c.process_id = pid->get<std::string>();
    return c;
  }
  if (type == "FileChange") {
    protocol::file_change_item f;
    f.id = str_of(item, "id", "");
    auto status = str_of(item, "status", "completed");
    f.status = status == "failed" ? protocol::item_status::failed
               : status == "declined" ? protocol::item_status::declined
                                      : protocol::item_status::completed;
    auto changes = object_of(item, "changes");
    if (!changes.is_object()) changes = json::object();
    for (auto& [path, c] : changes.items()) {
      if (!c.is_object()) continue;
      protocol::file_update_change u;
      u.path = path;
      auto kind = str_of(c, "type", "");
      if (kind == "add" || kind == "delete") {
        u.type = kind == "add" ? protocol::file_update_change::kind::add
                               : protocol::file_update_change::kind::remove;
        u.diff = str_of(c, "content", "");
      } else {
        u.type = protocol::file_update_change::kind::update;
        u.diff = str_of(c, "unified_diff", "");
        if (auto m = c.find("move_path"); m != c.end() && m->is_string()) u.move_path = m->get<std::string>();
      }
      f.changes.push_back(std::move(u));
    }
    return f;
  }
  return std::nullopt;  // Reasoning, web search, ...: not shown by parley yet
}

/// A turn being rebuilt. Items from item_completed records win over the
/// legacy user_message / agent_message events of the same kind.
struct turn_builder {
  protocol::turn turn;
  std::vector<protocol::thread_item> legacy;
  std::vector<protocol::thread_item> completed;
  bool completed_user = false, completed_agent = false;
  bool explicit_start = false;

  protocol::turn finish() {
    for (auto& i : legacy) {
      bool user = std::holds_alternative<protocol::user_message_item>(i);
      if ((user && completed_user) || (!user && completed_agent)) continue;
      turn.items.push_back(std::move(i));
    }
    // Legacy items were recorded in order; completed items are interleaved by
    // their own order. Merge keeping each list's order: legacy first (they
    // carry the user message), then completed ones, unless completed has the
    // user message, in which case it is already first.
    std::vector<protocol::thread_item> merged;
    if (completed_user) {
      merged = std::move(completed);
      for (auto& i : turn.items) merged.push_back(std::move(i));
    } else {
      // user message (legacy) -> completed items -> remaining legacy items
      auto it = turn.items.begin();
      if (it != turn.items.end() && std::holds_alternative<protocol::user_message_item>(*it))
        merged.push_back(std::move(*it++));
      for (auto& c : completed) merged.push_back(std::move(c));
      for (; it != turn.items.end(); ++it) merged.push_back(std::move(*it));
    }
    turn.items = std::move(merged);
    return std::move(turn);
  }
};

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
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_") == std::string::npos;
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

std::string file_uri_to_path(const std::string& uri) {
  if (uri.rfind("file://", 0) != 0) return uri;
  std::string out;
  for (size_t i = 7; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size()) {
      out += static_cast<char>(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
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
  return dump_line(json{{"timestamp", rfc3339_ms(meta.created_at * 1000)}, {"type", "session_meta"},
                        {"payload", std::move(p)}});
}

std::vector<std::string> encode_record(const protocol::thread& meta, const store_record& record) {
  std::vector<std::string> out;
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, thread_created_record>) {
          out.push_back(encode_session_meta(r.meta));
        } else if constexpr (std::is_same_v<T, turn_started_record>) {
          out.push_back(event(json{{"type", "task_started"}, {"turn_id", r.turn_id},
                                   {"started_at", r.started_at}, {"model_context_window", nullptr},
                                   {"collaboration_mode_kind", "default"}}));
        } else if constexpr (std::is_same_v<T, item_record>) {
          out = encode_item(meta, r.turn_id, r.item);
        } else if constexpr (std::is_same_v<T, turn_completed_record>) {
          out.push_back(end_of_turn(r.turn));
        } else if constexpr (std::is_same_v<T, thread_renamed_record>) {
          out.push_back(event(json{{"type", "thread_name_updated"}, {"thread_id", meta.id},
                                   {"thread_name", protocol::or_null(r.name)}}));
        }
      },
      record);
  return out;
}

std::vector<std::string> encode_thread(const protocol::thread& meta) {
  std::vector<std::string> out{encode_session_meta(meta)};
  auto append = [&](const store_record& r) {
    for (auto& l : encode_record(meta, r)) out.push_back(std::move(l));
  };
  if (meta.name) append(thread_renamed_record{meta.name});
  for (auto& t : meta.turns) {
    append(turn_started_record{t.id, t.started_at.value_or(meta.created_at)});
    for (auto& i : t.items) append(item_record{t.id, i});
    if (t.status != protocol::turn_status::in_progress) append(turn_completed_record{t});
  }
  return out;
}

caf::expected<stored_thread> decode_rollout(const std::vector<std::string>& lines,
                                            const std::string& path) {
  auto fail = [&](const std::string& why) {
    return make_error(errc::invalid_request, "failed to read rollout `" + path + "`: " + why);
  };
  if (lines.empty()) return fail("the file is empty");
  auto first = json::parse(lines.front(), nullptr, false);
  if (first.is_discarded() || !first.is_object()) return fail("the first line is not JSON");
  if (str_of(first, "type", "") != "session_meta" || !first.contains("payload")
      || !first["payload"].is_object())
    return fail("it does not start with session metadata");
  const auto& m = first["payload"];
  stored_thread out;
  auto& t = out.meta;
  t.id = str_of(m, "id", "");
  if (!protocol::is_uuid(t.id)) return fail("session metadata has no valid id");
  t.created_at = parse_rfc3339_ms(str_of(m, "timestamp", str_of(first, "timestamp"))) / 1000;
  t.updated_at = t.created_at;
  t.cwd = str_of(m, "cwd", "");
  t.cli_version = str_of(m, "cli_version", "");
  if (auto s = m.find("source"); s != m.end() && s->is_string()) t.source = s->get<std::string>();
  t.model_provider = str_of(m, "model_provider", "openai");
  if (auto f = m.find("forked_from_id"); f != m.end() && f->is_string()) t.forked_from_id = f->get<std::string>();
  t.path = path;
  t.status = protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};

  std::optional<turn_builder> open;
  int item_counter = 0;
  auto close_turn = [&](protocol::turn_status status) {
    if (!open) return;
    open->turn.status = status;
    t.turns.push_back(open->finish());
    open.reset();
  };
  auto ensure_turn = [&](size_t index) -> turn_builder& {
    if (!open) {
      open.emplace();
      open->turn.id = "rollout-" + std::to_string(index);
    }
    return *open;
  };
  for (size_t i = 1; i < lines.size(); ++i) {
    auto j = json::parse(lines[i], nullptr, false);
    if (j.is_discarded() || !j.is_object() || str_of(j, "type", "") != "event_msg") continue;
    auto pi = j.find("payload");
    if (pi == j.end() || !pi->is_object()) continue;
    const auto& p = *pi;
    auto type = str_of(p, "type", "");
    if (auto ts = parse_rfc3339_ms(str_of(j, "timestamp", "")); ts / 1000 > t.updated_at)
      t.updated_at = ts / 1000;
    if (type == "task_started") {
      // An open implicit turn ends here; an explicit one that never ended was cut off.
      if (open) close_turn(open->explicit_start ? protocol::turn_status::interrupted
                                                : protocol::turn_status::completed);
      open.emplace();
      open->explicit_start = true;
      open->turn.id = str_of(p, "turn_id", "rollout-" + std::to_string(i));
      open->turn.started_at = opt_int(p, "started_at");
    } else if (type == "user_message") {
      auto& b = ensure_turn(i);
      protocol::user_message_item u;
      u.id = "item-" + std::to_string(++item_counter);
      u.content.push_back(protocol::user_input::make_text(str_of(p, "message", "")));
      if (t.preview.empty()) t.preview = str_of(p, "message", "");
      b.legacy.push_back(std::move(u));
    } else if (type == "agent_message") {
      auto& b = ensure_turn(i);
      protocol::agent_message_item a;
      a.id = "item-" + std::to_string(++item_counter);
      a.text = str_of(p, "message", "");
      if (auto ph = p.find("phase"); ph != p.end() && ph->is_string()) a.phase = ph->get<std::string>();
      b.legacy.push_back(std::move(a));
    } else if (type == "item_completed") {
      auto item = p.find("item");
      if (item == p.end() || !item->is_object()) continue;
      auto converted = item_of_turn_item(*item);
      if (!converted) continue;
      auto& b = ensure_turn(i);
      if (auto* u = std::get_if<protocol::user_message_item>(&*converted)) {
        b.completed_user = true;
        if (t.preview.empty()) t.preview = protocol::joined_text(u->content);
      }
      if (std::holds_alternative<protocol::agent_message_item>(*converted)) b.completed_agent = true;
      b.completed.push_back(std::move(*converted));
    } else if (type == "task_complete" || type == "turn_aborted") {
      if (!open) continue;
      open->turn.completed_at = opt_int(p, "completed_at");
      open->turn.duration_ms = opt_int(p, "duration_ms");
      if (!open->turn.started_at) open->turn.started_at = opt_int(p, "started_at");
      if (type == "turn_aborted") {
        close_turn(protocol::turn_status::interrupted);
      } else if (auto e = p.find("error"); e != p.end() && e->is_object()) {
        open->turn.error = error_of(*e);
        close_turn(protocol::turn_status::failed);
      } else {
        close_turn(protocol::turn_status::completed);
      }
    } else if (type == "thread_name_updated") {
      if (auto n = p.find("thread_name"); n != p.end() && n->is_string())
        t.name = n->get<std::string>();
      else
        t.name.reset();
    }
  }
  if (open) close_turn(open->explicit_start ? protocol::turn_status::interrupted
                                            : protocol::turn_status::completed);
  return out;
}

caf::expected<stored_thread> read_rollout(const std::string& path) {
  bool torn = false;
  auto lines = read_rollout_lines(path, &torn);
  if (!lines) return lines.error();
  if (torn) PARLEY_WARN("store event=torn_last_line path={} skipped", path);
  return decode_rollout(*lines, path);
}

}  // namespace parley::store
