#include "protocol/items.hpp"

namespace parley::protocol {

// -- user input ----------------------------------------------------------------

user_input user_input::make_text(std::string text) {
  user_input x;
  x.type = "text";
  x.raw = json{{"type", "text"}, {"text", text}, {"text_elements", json::array()}};
  x.text = std::move(text);
  return x;
}

void to_json(json& j, const user_input& x) {
  if (!x.raw.is_null()) {
    j = x.raw;
    return;
  }
  j = json{{"type", x.type}, {"text", x.text}, {"text_elements", json::array()}};
}

void from_json(const json& j, user_input& x) {
  require_object(j);
  x.type = required<std::string>(j, "type");
  static const char* const kinds[] = {"text",      "image", "localImage", "audio",
                                      "localAudio", "skill", "mention"};
  bool known = false;
  for (auto* k : kinds) known = known || x.type == k;
  if (!known)
    throw_unknown_variant(x.type,
                          {"text", "image", "localImage", "audio", "localAudio", "skill", "mention"});
  if (x.type == "text") {
    x.text = required<std::string>(j, "text");
    if (auto te = optional<json>(j, "text_elements"); te && !te->is_array())
      throw_invalid_type(*te, "a sequence");
  }
  x.raw = j;
}

std::string joined_text(const std::vector<user_input>& input) {
  std::string out;
  for (const auto& x : input) {
    if (x.type != "text") continue;
    if (!out.empty()) out += '\n';
    out += x.text;
  }
  return out;
}

// -- command actions -------------------------------------------------------------

void to_json(json& j, const command_action& x) {
  switch (x.type) {
    case command_action::kind::read:
      j = json{{"type", "read"},
               {"command", x.command},
               {"name", x.name.value_or("")},
               {"path", x.path.value_or("")}};
      break;
    case command_action::kind::list_files:
      j = json{{"type", "listFiles"}, {"command", x.command}, {"path", or_null(x.path)}};
      break;
    case command_action::kind::search:
      j = json{{"type", "search"},
               {"command", x.command},
               {"query", or_null(x.query)},
               {"path", or_null(x.path)}};
      break;
    case command_action::kind::unknown:
      j = json{{"type", "unknown"}, {"command", x.command}};
      break;
  }
}

void from_json(const json& j, command_action& x) {
  require_object(j);
  auto type = required<std::string>(j, "type");
  x.command = required<std::string>(j, "command");
  if (type == "read") {
    x.type = command_action::kind::read;
    x.name = required<std::string>(j, "name");
    x.path = required<std::string>(j, "path");
  } else if (type == "listFiles") {
    x.type = command_action::kind::list_files;
    x.path = optional<std::string>(j, "path");
  } else if (type == "search") {
    x.type = command_action::kind::search;
    x.query = optional<std::string>(j, "query");
    x.path = optional<std::string>(j, "path");
  } else if (type == "unknown") {
    x.type = command_action::kind::unknown;
  } else {
    throw_unknown_variant(type, {"read", "listFiles", "search", "unknown"});
  }
}

// -- item status -------------------------------------------------------------------

const char* to_string(item_status x) {
  switch (x) {
    case item_status::in_progress:
      return "inProgress";
    case item_status::completed:
      return "completed";
    case item_status::failed:
      return "failed";
    case item_status::declined:
      return "declined";
  }
  return "failed";
}

void to_json(json& j, const item_status& x) { j = to_string(x); }

void from_json(const json& j, item_status& x) {
  auto s = decode<std::string>(j);
  for (auto v : {item_status::in_progress, item_status::completed, item_status::failed,
                 item_status::declined})
    if (s == to_string(v)) {
      x = v;
      return;
    }
  throw_unknown_variant(s, {"inProgress", "completed", "failed", "declined"});
}

// -- thread items --------------------------------------------------------------------

const std::string& item_id(const thread_item& x) {
  return std::visit([](const auto& i) -> const std::string& { return i.id; }, x);
}

namespace {

json encode(const user_message_item& x) {
  json j{{"type", "userMessage"}, {"id", x.id}, {"content", x.content}};
  if (x.client_id) j["clientId"] = *x.client_id;
  return j;
}

json encode(const agent_message_item& x) {
  return json{{"type", "agentMessage"}, {"id", x.id}, {"text", x.text}, {"phase", or_null(x.phase)}};
}

json encode(const command_execution_item& x) {
  return json{{"type", "commandExecution"},
              {"id", x.id},
              {"command", x.command},
              {"cwd", x.cwd},
              {"processId", or_null(x.process_id)},
              {"source", x.source},
              {"status", x.status},
              {"commandActions", x.command_actions},
              {"aggregatedOutput", or_null(x.aggregated_output)},
              {"exitCode", or_null(x.exit_code)},
              {"durationMs", or_null(x.duration_ms)}};
}

json encode(const file_change_item& x) {
  return json{{"type", "fileChange"}, {"id", x.id}, {"changes", x.changes}, {"status", x.status}};
}

json encode(const dynamic_tool_call_item& x) {
  return json{{"type", "dynamicToolCall"}, {"id", x.id},
              {"tool", x.tool},            {"namespace", or_null(x.ns)},
              {"arguments", x.arguments},  {"status", x.status},
              {"contentItems", x.content_items ? *x.content_items : json(nullptr)},
              {"success", or_null(x.success)},
              {"durationMs", or_null(x.duration_ms)}};
}

json encode(const mcp_tool_call_item& x) {
  return json{{"type", "mcpToolCall"},
              {"id", x.id},
              {"server", x.server},
              {"tool", x.tool},
              {"arguments", x.arguments},
              {"status", x.status},
              {"result", x.result ? *x.result : json(nullptr)},
              {"error", x.error ? json{{"message", *x.error}} : json(nullptr)},
              {"durationMs", or_null(x.duration_ms)},
              {"readOnlyHint", or_null(x.read_only_hint)},
              {"pluginId", nullptr},
              {"appContext", nullptr},
              {"mcpAppUi", nullptr}};
}

json encode(const reasoning_item& x) {
  return json{{"type", "reasoning"}, {"id", x.id}, {"summary", x.summary}, {"content", x.content}};
}

json encode(const context_compaction_item& x) {
  return json{{"type", "contextCompaction"}, {"id", x.id}};
}

json encode(const entered_review_mode_item& x) {
  return json{{"type", "enteredReviewMode"}, {"id", x.id}, {"review", x.review}};
}

json encode(const exited_review_mode_item& x) {
  return json{{"type", "exitedReviewMode"}, {"id", x.id}, {"review", x.review}};
}

}  // namespace

const char* to_string(file_update_change::kind x) {
  switch (x) {
    case file_update_change::kind::add:
      return "add";
    case file_update_change::kind::remove:
      return "delete";
    case file_update_change::kind::update:
      return "update";
  }
  return "update";
}

void to_json(json& j, const file_update_change& x) {
  json kind{{"type", to_string(x.type)}};
  if (x.type == file_update_change::kind::update) kind["move_path"] = or_null(x.move_path);
  j = json{{"path", x.path}, {"kind", std::move(kind)}, {"diff", x.diff}};
}

void from_json(const json& j, file_update_change& x) {
  require_object(j);
  x.path = required<std::string>(j, "path");
  x.diff = required<std::string>(j, "diff");
  auto kind = required<json>(j, "kind");
  require_object(kind);
  auto type = required<std::string>(kind, "type");
  if (type == "add") {
    x.type = file_update_change::kind::add;
  } else if (type == "delete") {
    x.type = file_update_change::kind::remove;
  } else if (type == "update") {
    x.type = file_update_change::kind::update;
    x.move_path = optional<std::string>(kind, "move_path");
  } else {
    throw_unknown_variant(type, {"add", "delete", "update"});
  }
}

void to_json(json& j, const thread_item& x) {
  j = std::visit([](const auto& i) { return encode(i); }, x);
}

void from_json(const json& j, thread_item& x) {
  require_object(j);
  auto type = required<std::string>(j, "type");
  if (type == "userMessage") {
    user_message_item i;
    i.id = required<std::string>(j, "id");
    i.content = required<std::vector<user_input>>(j, "content");
    i.client_id = optional<std::string>(j, "clientId");
    x = std::move(i);
  } else if (type == "agentMessage") {
    agent_message_item i;
    i.id = required<std::string>(j, "id");
    i.text = required<std::string>(j, "text");
    i.phase = optional<std::string>(j, "phase");
    x = std::move(i);
  } else if (type == "commandExecution") {
    command_execution_item i;
    i.id = required<std::string>(j, "id");
    i.command = required<std::string>(j, "command");
    i.cwd = required<std::string>(j, "cwd");
    i.status = required<item_status>(j, "status");
    i.command_actions = optional<std::vector<command_action>>(j, "commandActions").value_or(
        std::vector<command_action>{});
    i.aggregated_output = optional<std::string>(j, "aggregatedOutput");
    if (auto c = optional<int64_t>(j, "exitCode")) i.exit_code = static_cast<int32_t>(*c);
    i.duration_ms = optional<int64_t>(j, "durationMs");
    i.process_id = optional<std::string>(j, "processId");
    i.source = optional<std::string>(j, "source").value_or("agent");
    x = std::move(i);
  } else if (type == "fileChange") {
    file_change_item i;
    i.id = required<std::string>(j, "id");
    i.changes = required<std::vector<file_update_change>>(j, "changes");
    i.status = required<item_status>(j, "status");
    x = std::move(i);
  } else if (type == "reasoning") {
    reasoning_item i;
    i.id = required<std::string>(j, "id");
    i.summary = optional<std::vector<std::string>>(j, "summary").value_or(std::vector<std::string>{});
    i.content = optional<std::vector<std::string>>(j, "content").value_or(std::vector<std::string>{});
    x = std::move(i);
  } else if (type == "contextCompaction") {
    x = context_compaction_item{required<std::string>(j, "id")};
  } else if (type == "dynamicToolCall") {
    dynamic_tool_call_item i;
    i.id = required<std::string>(j, "id");
    i.tool = required<std::string>(j, "tool");
    i.ns = optional<std::string>(j, "namespace");
    i.arguments = j.contains("arguments") ? j["arguments"] : json(nullptr);
    i.status = required<item_status>(j, "status");
    if (auto c = j.find("contentItems"); c != j.end() && !c->is_null()) i.content_items = *c;
    i.success = optional<bool>(j, "success");
    i.duration_ms = optional<int64_t>(j, "durationMs");
    x = std::move(i);
  } else if (type == "mcpToolCall") {
    mcp_tool_call_item i;
    i.id = required<std::string>(j, "id");
    i.server = required<std::string>(j, "server");
    i.tool = required<std::string>(j, "tool");
    i.arguments = j.contains("arguments") ? j["arguments"] : json(nullptr);
    i.status = required<item_status>(j, "status");
    if (auto r = j.find("result"); r != j.end() && r->is_object()) i.result = *r;
    if (auto e = j.find("error"); e != j.end() && e->is_object())
      i.error = e->value("message", std::string{});
    i.duration_ms = optional<int64_t>(j, "durationMs");
    i.read_only_hint = optional<bool>(j, "readOnlyHint");
    x = std::move(i);
  } else if (type == "enteredReviewMode") {
    x = entered_review_mode_item{required<std::string>(j, "id"), required<std::string>(j, "review"),
                                 json(nullptr)};
  } else if (type == "exitedReviewMode") {
    x = exited_review_mode_item{required<std::string>(j, "id"), required<std::string>(j, "review"),
                                json(nullptr)};
  } else {
    throw_unknown_variant(type, {"userMessage", "agentMessage", "commandExecution", "fileChange",
                                 "reasoning", "contextCompaction", "dynamicToolCall",
                                 "enteredReviewMode", "exitedReviewMode", "mcpToolCall"});
  }
}

}  // namespace parley::protocol
