#include "protocol/item_text.hpp"

#include "protocol/notification_text.hpp"

namespace parley::protocol {

bool append_string_or_null(std::string& out, const std::optional<std::string>& s) {
  if (!s) {
    out += "null";
    return true;
  }
  return append_json_string(out, *s);
}

bool append_string_array(std::string& out, const std::vector<std::string>& xs) {
  out += '[';
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0) out += ',';
    if (!append_json_string(out, xs[i])) return false;
  }
  out += ']';
  return true;
}

// Named, not anonymous: unique in the unity build.
namespace item_text_detail {

template <class Int>
void int_or_null(std::string& out, const std::optional<Int>& x) {
  if (x)
    out += std::to_string(*x);
  else
    out += "null";
}

bool append_input(std::string& out, const user_input& x) {
  if (!x.raw.is_null()) {
    // Kept as the client sent it: a DOM already, written as nlohmann writes it.
    out += dump_line(x.raw);
    return true;
  }
  append_key(out += '{', "text");
  if (!append_json_string(out, x.text)) return false;
  out += R"(,"text_elements":[],"type":)";
  if (!append_json_string(out, x.type)) return false;
  out += '}';
  return true;
}

bool append(std::string& out, const user_message_item& x) {
  out += '{';
  if (x.client_id) {
    append_key(out, "clientId");
    if (!append_json_string(out, *x.client_id)) return false;
    out += ',';
  }
  append_key(out, "content");
  out += '[';
  for (size_t i = 0; i < x.content.size(); ++i) {
    if (i > 0) out += ',';
    if (!append_input(out, x.content[i])) return false;
  }
  out += "],";
  append_key(out, "id");
  if (!append_json_string(out, x.id)) return false;
  out += R"(,"type":"userMessage"})";
  return true;
}

bool append(std::string& out, const agent_message_item& x) {
  append_key(out += '{', "id");
  if (!append_json_string(out, x.id)) return false;
  append_key(out += ',', "phase");
  if (!append_string_or_null(out, x.phase)) return false;
  append_key(out += ',', "text");
  if (!append_json_string(out, x.text)) return false;
  out += R"(,"type":"agentMessage"})";
  return true;
}

}  // namespace item_text_detail

bool append_command_action(std::string& out, const command_action& x) {
  using namespace item_text_detail;
  append_key(out += '{', "command");
  if (!append_json_string(out, x.command)) return false;
  switch (x.type) {
    case command_action::kind::read:
      append_key(out += ',', "name");
      if (!append_json_string(out, x.name.value_or(""))) return false;
      append_key(out += ',', "path");
      if (!append_json_string(out, x.path.value_or(""))) return false;
      out += R"(,"type":"read"})";
      return true;
    case command_action::kind::list_files:
      append_key(out += ',', "path");
      if (!append_string_or_null(out, x.path)) return false;
      out += R"(,"type":"listFiles"})";
      return true;
    case command_action::kind::search:
      append_key(out += ',', "path");
      if (!append_string_or_null(out, x.path)) return false;
      append_key(out += ',', "query");
      if (!append_string_or_null(out, x.query)) return false;
      out += R"(,"type":"search"})";
      return true;
    case command_action::kind::unknown:
      out += R"(,"type":"unknown"})";
      return true;
  }
  return false;
}

bool append_command_actions(std::string& out, const std::vector<command_action>& xs) {
  out += '[';
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0) out += ',';
    if (!append_command_action(out, xs[i])) return false;
  }
  out += ']';
  return true;
}

namespace item_text_detail {

bool append(std::string& out, const command_execution_item& x) {
  append_key(out += '{', "aggregatedOutput");
  if (!append_string_or_null(out, x.aggregated_output)) return false;
  append_key(out += ',', "command");
  if (!append_json_string(out, x.command)) return false;
  append_key(out += ',', "commandActions");
  if (!append_command_actions(out, x.command_actions)) return false;
  append_key(out += ',', "cwd");
  if (!append_json_string(out, x.cwd)) return false;
  append_key(out += ',', "durationMs");
  int_or_null(out, x.duration_ms);
  append_key(out += ',', "exitCode");
  int_or_null(out, x.exit_code);
  append_key(out += ',', "id");
  if (!append_json_string(out, x.id)) return false;
  append_key(out += ',', "processId");
  if (!append_string_or_null(out, x.process_id)) return false;
  append_key(out += ',', "source");
  if (!append_json_string(out, x.source)) return false;
  append_key(out += ',', "status");
  out += '"';
  out += to_string(x.status);
  out += R"(","type":"commandExecution"})";
  return true;
}

template <class Other>
bool append(std::string&, const Other&) {
  return false;  // nlohmann writes the rest
}

bool append_error(std::string& out, const turn_error& x) {
  append_key(out += '{', "additionalDetails");
  if (!append_string_or_null(out, x.additional_details)) return false;
  append_key(out += ',', "codexErrorInfo");
  if (!append_string_or_null(out, x.codex_error_info)) return false;
  append_key(out += ',', "message");
  if (!append_json_string(out, x.message)) return false;
  out += '}';
  return true;
}

}  // namespace item_text_detail

bool append_item(std::string& out, const thread_item& x) {
  using namespace item_text_detail;
  return std::visit([&out](const auto& i) { return append(out, i); }, x);
}

bool append_turn(std::string& out, const turn& x) {
  using namespace item_text_detail;
  append_key(out += '{', "completedAt");
  int_or_null(out, x.completed_at);
  append_key(out += ',', "durationMs");
  int_or_null(out, x.duration_ms);
  append_key(out += ',', "error");
  if (!x.error)
    out += "null";
  else if (!append_error(out, *x.error))
    return false;
  append_key(out += ',', "id");
  if (!append_json_string(out, x.id)) return false;
  append_key(out += ',', "items");
  out += '[';
  for (size_t i = 0; i < x.items.size(); ++i) {
    if (i > 0) out += ',';
    if (!append_item(out, x.items[i])) return false;
  }
  out += ']';
  if (x.items_view) {
    append_key(out += ',', "itemsView");
    if (!append_json_string(out, *x.items_view)) return false;
  }
  append_key(out += ',', "startedAt");
  int_or_null(out, x.started_at);
  append_key(out += ',', "status");
  out += '"';
  out += to_string(x.status);
  out += "\"}";
  return true;
}

}  // namespace parley::protocol
