#include "actors/model/wire/chat_messages.hpp"

#include <string>

#include "actors/model/wire/json_fields.hpp"
#include "actors/model/wire/tool_calls.hpp"

namespace parley::wire {

namespace {

using namespace detail;

// The text of a content list ([{type: input_text|output_text|text, text}])
// or of a plain string.
std::string content_text(const json* content) {
  if (!content) return {};
  if (content->is_string()) return content->get<std::string>();
  std::string text;
  if (!content->is_array()) return text;
  for (const auto& part : *content) {
    if (const std::string* piece = string_field(part, "text")) text += *piece;
  }
  return text;
}

json tool_call_entry(std::string id, std::string name, std::string arguments) {
  return {{"id", std::move(id)},
          {"type", "function"},
          {"function", {{"name", std::move(name)}, {"arguments", std::move(arguments)}}}};
}

json arguments_text(const json& item) {
  const json* arguments = field(item, "arguments");
  if (arguments && arguments->is_string()) return *arguments;
  return arguments && arguments->is_object() ? dump(*arguments) : std::string("{}");
}

// The call as a chat tool_calls entry, or null for an item that is no call.
json as_tool_call(const json& item, const std::string& type) {
  if (type == "function_call") {
    // A namespace tool's function under the flat name chat_tools offered.
    auto ns = string_or(item, "namespace");
    auto name = ns.empty() ? string_or(item, "name") : flat_call_name(ns, string_or(item, "name"));
    return tool_call_entry(string_or(item, "call_id"), std::move(name), arguments_text(item));
  }
  if (type == "custom_tool_call") {
    return tool_call_entry(string_or(item, "call_id"), string_or(item, "name"),
                           dump(json{{"input", string_or(item, "input")}}));
  }
  if (type == "local_shell_call") {
    const json* action = object_field(item, "action");
    json args = {{"command", action ? action->value("command", json::array()) : json::array()}};
    if (action && string_field(*action, "working_directory")) {
      args["workdir"] = (*action)["working_directory"];
    }
    std::string id = string_or(item, "call_id", string_or(item, "id"));
    return tool_call_entry(std::move(id), "shell", dump(args));
  }
  return nullptr;
}

std::string role_of(const json& item) {
  auto role = string_or(item, "role", "user");
  return role == "developer" || role == "system" ? "system" : role;
}

// Calls join the assistant message right before them (text or calls), as
// the model produced them together.
void add_call(json& messages, json call) {
  if (!messages.empty()) {
    json& last = messages.back();
    if (last["role"] == "assistant") {
      if (!last.contains("tool_calls")) last["tool_calls"] = json::array();
      last["tool_calls"].push_back(std::move(call));
      return;
    }
  }
  messages.push_back({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array({std::move(call)})}});
}

}  // namespace

nlohmann::json chat_messages(const std::vector<nlohmann::json>& history,
                             std::string_view instructions) {
  json messages = json::array();
  if (!instructions.empty()) {
    messages.push_back({{"role", "system"}, {"content", std::string(instructions)}});
  }
  for (const auto& item : history) {
    auto type = string_or(item, "type");
    if (type == "message") {
      messages.push_back({{"role", role_of(item)}, {"content", content_text(field(item, "content"))}});
    } else if (type == "function_call_output" || type == "custom_tool_call_output") {
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", string_or(item, "call_id")},
                          {"content", content_text(field(item, "output"))}});
    } else if (json call = as_tool_call(item, type); !call.is_null()) {
      add_call(messages, std::move(call));
    }
  }
  return messages;
}

}  // namespace parley::wire
