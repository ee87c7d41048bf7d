#include "actors/model/wire/request_body.hpp"

#include "actors/model/wire/chat_messages.hpp"
#include "actors/model/wire/history.hpp"
#include "actors/model/wire/json_fields.hpp"

namespace parley::wire {

using namespace detail;

nlohmann::json user_message(std::string_view text) {
  return {{"type", "message"},
          {"role", "user"},
          {"content", json::array({{{"type", "input_text"}, {"text", std::string(text)}}})}};
}

nlohmann::json responses_request_body(const std::vector<nlohmann::json>& history,
                                      const request_options& options) {
  json body = {{"model", options.model},
               {"instructions", options.instructions},
               {"input", request_history(history)},
               {"tools", responses_tools(options.tools)},
               {"tool_choice", "auto"},
               {"parallel_tool_calls", true},
               {"store", false},
               {"stream", true},
               {"include", json::array()}};
  if (options.reasoning) {
    body["reasoning"] = *options.reasoning;
    body["include"].push_back("reasoning.encrypted_content");
  }
  if (options.prompt_cache_key) body["prompt_cache_key"] = *options.prompt_cache_key;
  return body;
}

nlohmann::json chat_request_body(const std::vector<nlohmann::json>& history,
                                 const request_options& options) {
  auto sendable = request_history(history);
  json body = {{"model", options.model},
               {"messages", chat_messages({sendable.begin(), sendable.end()}, options.instructions)},
               {"tools", chat_tools()},
               {"tool_choice", "auto"},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (options.reasoning) {
    if (const std::string* effort = string_field(*options.reasoning, "effort")) {
      body["reasoning_effort"] = *effort;
    }
  }
  return body;
}

std::string body_text(const nlohmann::json& body) { return dump(body); }

}  // namespace parley::wire
