#include "bench/mock_model/request_turn.hpp"

namespace parley::mock_model {

namespace {

using json = nlohmann::json;

std::string string_field(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A message's text: a plain string, or the `text` of each part (`input_text`, `text`),
// one part per line.
std::string text_of(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (!content.is_array()) return text;
  for (const auto& part : content) {
    if (!part.is_object()) continue;
    auto it = part.find("text");
    if (it == part.end() || !it->is_string()) continue;
    if (!text.empty()) text += '\n';
    text += it->get<std::string>();
  }
  return text;
}

}  // namespace

request_turn responses_turn(const json& input) {
  request_turn turn;
  if (input.is_string()) {  // the API's shorthand for one user message
    turn.user_text = input.get<std::string>();
    turn.items = 1;
    return turn;
  }
  if (!input.is_array()) return turn;
  turn.items = input.size();
  for (const auto& item : input) {
    if (!item.is_object()) continue;
    auto type = string_field(item, "type");
    // An item with a role and no type is a message too (EasyInputMessage).
    bool is_message = type == "message" || (type.empty() && item.contains("role"));
    if (is_message && string_field(item, "role") == "user") {
      turn.user_text = item.contains("content") ? text_of(item.at("content")) : std::string();
      turn.tool_outputs = 0;
    } else if (type == "function_call_output" || type == "custom_tool_call_output") {
      ++turn.tool_outputs;
    }
  }
  return turn;
}

request_turn chat_turn(const json& messages) {
  request_turn turn;
  if (!messages.is_array()) return turn;
  turn.items = messages.size();
  for (const auto& message : messages) {
    if (!message.is_object()) continue;
    auto role = string_field(message, "role");
    if (role == "user") {
      turn.user_text = message.contains("content") ? text_of(message.at("content")) : std::string();
      turn.tool_outputs = 0;
    } else if (role == "tool") {
      ++turn.tool_outputs;
    }
  }
  return turn;
}

}  // namespace parley::mock_model
