#include "actors/store/turn_items.hpp"

#include "actors/store/rollout_format.hpp"
#include "actors/store/rollout_json.hpp"

namespace parley::store {

using json = nlohmann::json;
using namespace rollout_json;

namespace {

json parsed_cmd(const protocol::command_action& a) {
  using kind = protocol::command_action::kind;
  switch (a.type) {
    case kind::read:
      return json{{"type", "read"},
                  {"cmd", a.command},
                  {"name", a.name.value_or("")},
                  {"path", a.path.value_or("")}};
    case kind::list_files:
      return json{{"type", "list_files"}, {"cmd", a.command}, {"path", protocol::or_null(a.path)}};
    case kind::search:
      return json{{"type", "search"},
                  {"cmd", a.command},
                  {"query", protocol::or_null(a.query)},
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

protocol::item_status status_of(const json& item) {
  auto status = str_of(item, "status", "completed");
  return status == "failed"     ? protocol::item_status::failed
         : status == "declined" ? protocol::item_status::declined
                                : protocol::item_status::completed;
}

protocol::user_message_item user_message_of(const json& item) {
  protocol::user_message_item u;
  u.id = str_of(item, "id", "");
  for (auto& c : list_of(item, "content"))
    if (str_of(c, "type", "") == "text")
      u.content.push_back(protocol::user_input::make_text(str_of(c, "text", "")));
  return u;
}

protocol::agent_message_item agent_message_of(const json& item) {
  protocol::agent_message_item a;
  a.id = str_of(item, "id", "");
  for (auto& c : list_of(item, "content")) a.text += str_of(c, "text", "");
  return a;
}

protocol::command_execution_item command_of(const json& item) {
  protocol::command_execution_item c;
  c.id = str_of(item, "id", "");
  std::vector<std::string> argv;
  for (auto& a : list_of(item, "command"))
    if (a.is_string()) argv.push_back(a.get<std::string>());
  c.command = shell_join(argv);
  c.cwd = file_uri_to_path(str_of(item, "cwd", ""));
  for (auto& p : list_of(item, "parsed_cmd")) c.command_actions.push_back(command_action_of(p));
  c.status = status_of(item);
  c.aggregated_output = opt_str(item, "aggregated_output");
  if (auto e = opt_int(item, "exit_code")) c.exit_code = static_cast<int32_t>(*e);
  if (auto d = item.find("duration"); d != item.end() && d->is_object())
    c.duration_ms
        = opt_int(*d, "secs").value_or(0) * 1000 + opt_int(*d, "nanos").value_or(0) / 1'000'000;
  c.process_id = opt_str(item, "process_id");
  // Codex's own sources (unified exec) are shown as the model's.
  if (str_of(item, "source", "") == "user_shell") c.source = "userShell";
  return c;
}

protocol::file_update_change change_of(const std::string& path, const json& c) {
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
    u.move_path = opt_str(c, "move_path");
  }
  return u;
}

protocol::file_change_item file_change_of(const json& item) {
  protocol::file_change_item f;
  f.id = str_of(item, "id", "");
  f.status = status_of(item);
  auto changes = object_of(item, "changes");  // iterated below: must outlive items()
  for (auto& [path, c] : changes.items())
    if (c.is_object()) f.changes.push_back(change_of(path, c));
  return f;
}

}  // namespace

/// The argv parley runs a command with (it is shown as its shell join).
std::vector<std::string> argv_of(const protocol::command_execution_item& c) {
  const std::string prefix = "/bin/sh -c ";
  if (c.command.rfind(prefix, 0) == 0 && !c.command_actions.empty())
    return {"/bin/sh", "-c", c.command_actions.front().command};
  return {"/bin/sh", "-c", c.command};
}

json turn_item_of(const protocol::command_execution_item& c) {
  json item{{"type", "CommandExecution"}, {"id", c.id},
            {"command", argv_of(c)},      {"cwd", path_to_file_uri(c.cwd)},
            {"source", c.source == "userShell" ? "user_shell" : "agent"},
            {"status", protocol::to_string(c.status)}};
  json parsed = json::array();
  for (auto& a : c.command_actions) parsed.push_back(parsed_cmd(a));
  item["parsed_cmd"] = std::move(parsed);
  if (c.process_id) item["process_id"] = *c.process_id;
  if (c.aggregated_output) item["aggregated_output"] = *c.aggregated_output;
  if (c.exit_code) item["exit_code"] = *c.exit_code;
  if (c.duration_ms)
    item["duration"]
        = json{{"secs", *c.duration_ms / 1000}, {"nanos", (*c.duration_ms % 1000) * 1'000'000}};
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

json turn_item_of(const protocol::dynamic_tool_call_item& d) {
  json item{{"type", "DynamicToolCall"},
            {"id", d.id},
            {"tool", d.tool},
            {"arguments", d.arguments},
            {"status", protocol::to_string(d.status)},
            {"content_items", d.content_items.value_or(json(nullptr))},
            {"success", protocol::or_null(d.success)}};
  if (d.ns) item["namespace"] = *d.ns;
  if (d.duration_ms)
    item["duration"]
        = json{{"secs", *d.duration_ms / 1000}, {"nanos", (*d.duration_ms % 1000) * 1'000'000}};
  return item;
}

protocol::dynamic_tool_call_item dynamic_tool_call_of(const json& item) {
  protocol::dynamic_tool_call_item d;
  d.id = str_of(item, "id", "");
  d.tool = str_of(item, "tool", "");
  d.ns = opt_str(item, "namespace");
  if (auto a = item.find("arguments"); a != item.end()) d.arguments = *a;
  d.status = str_of(item, "status", "completed") == "failed" ? protocol::item_status::failed
                                                             : protocol::item_status::completed;
  if (auto c = item.find("content_items"); c != item.end() && c->is_array()) d.content_items = *c;
  if (auto s = item.find("success"); s != item.end() && s->is_boolean()) d.success = s->get<bool>();
  if (auto t = item.find("duration"); t != item.end() && t->is_object())
    d.duration_ms = opt_int(*t, "secs").value_or(0) * 1000 + opt_int(*t, "nanos").value_or(0) / 1'000'000;
  return d;
}

json turn_item_of(const protocol::mcp_tool_call_item& m) {
  // parley's own line: Codex keeps MCP calls as events of their own.
  json item{{"type", "McpToolCall"},
            {"id", m.id},
            {"server", m.server},
            {"tool", m.tool},
            {"arguments", m.arguments},
            {"status", protocol::to_string(m.status)},
            {"result", m.result.value_or(json(nullptr))},
            {"error", protocol::or_null(m.error)}};
  if (m.duration_ms) item["duration_ms"] = *m.duration_ms;
  if (m.read_only_hint) item["read_only_hint"] = *m.read_only_hint;
  return item;
}

protocol::mcp_tool_call_item mcp_tool_call_of(const json& item) {
  protocol::mcp_tool_call_item m;
  m.id = str_of(item, "id", "");
  m.server = str_of(item, "server", "");
  m.tool = str_of(item, "tool", "");
  if (auto a = item.find("arguments"); a != item.end()) m.arguments = *a;
  m.status = str_of(item, "status", "completed") == "failed" ? protocol::item_status::failed
                                                             : protocol::item_status::completed;
  if (auto r = item.find("result"); r != item.end() && r->is_object()) m.result = *r;
  m.error = opt_str(item, "error");
  m.duration_ms = opt_int(item, "duration_ms");
  if (auto h = item.find("read_only_hint"); h != item.end() && h->is_boolean())
    m.read_only_hint = h->get<bool>();
  return m;
}

std::optional<protocol::thread_item> item_of_turn_item(const json& item) {
  auto type = str_of(item, "type", "");
  if (type == "UserMessage") return user_message_of(item);
  if (type == "AgentMessage") return agent_message_of(item);
  if (type == "CommandExecution") return command_of(item);
  if (type == "FileChange") return file_change_of(item);
  if (type == "ContextCompaction") return protocol::context_compaction_item{str_of(item, "id", "")};
  if (type == "EnteredReviewMode") {
    auto target = item.find("target");
    return protocol::entered_review_mode_item{
        str_of(item, "id", ""), str_of(item, "user_facing_hint", ""),
        target != item.end() ? *target : json(nullptr)};
  }
  if (type == "ExitedReviewMode") {
    auto output = item.find("review_output");
    auto kept = output != item.end() ? *output : json(nullptr);
    return protocol::exited_review_mode_item{str_of(item, "id", ""),
                                             protocol::render_review(kept), kept};
  }
  if (type == "DynamicToolCall") return dynamic_tool_call_of(item);
  if (type == "McpToolCall") return mcp_tool_call_of(item);
  return std::nullopt;  // Reasoning, web search, ...: not shown by parley yet
}

}  // namespace parley::store
