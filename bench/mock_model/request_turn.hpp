#pragma once
// What a request says about its turn: the last user message's text (where the directives
// are) and how many tool outputs came back since it (how far the script got).

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace parley::mock_model {

struct request_turn {
  std::string user_text;
  std::size_t tool_outputs = 0;
  /// Items (Responses) or messages (Chat) in the request, for the default usage.
  std::size_t items = 0;
  /// The latest `mock: summary TEXT` of the user messages before the last one: what a
  /// request whose last user message has no directive (a compaction's) is answered.
  std::string summary;
};

/// From a Responses API `input`: the last `message` item with role `user`; tool outputs are
/// `function_call_output` and `custom_tool_call_output` items after it.
request_turn responses_turn(const nlohmann::json& input);

/// From Chat Completions `messages`: the last `role: user` message; tool outputs are the
/// `role: tool` messages after it.
request_turn chat_turn(const nlohmann::json& messages);

}  // namespace parley::mock_model
