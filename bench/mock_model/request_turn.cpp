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

/// The TEXT of the last `mock: summary TEXT` line of a message; empty if none.
std::string summary_of(const std::string& text) {
  static const std::string directive = "mock: summary ";
  std::string found;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    auto line = text.substr(pos, end - pos);
    auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, directive.size(), directive) == 0) {
      found = line.substr(first + directive.size());
      while (!found.empty() && (found.back() == '\r' || found.back() == ' ')) found.pop_back();
    }
    pos = end + 1;
  }
  return found;
}

/// A new last user message: the one before it may have set the summary.
void next_user_message(request_turn& turn, std::string text) {
  if (auto s = summary_of(turn.user_text); !s.empty()) turn.summary = std::move(s);
  turn.user_text = std::move(text);
  turn.tool_outputs = 0;
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
      next_user_message(turn,
                        item.contains("content") ? text_of(item.at("content")) : std::string());
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
      next_user_message(
          turn, message.contains("content") ? text_of(message.at("content")) : std::string());
    } else if (role == "tool") {
      ++turn.tool_outputs;
    }
  }
  return turn;
}

}  // namespace parley::mock_model
