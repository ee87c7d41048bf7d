#include "actors/model/wire/request_body.hpp"

#include "actors/model/wire/chat_messages.hpp"
#include "actors/model/wire/json_fields.hpp"

namespace parley::wire {

namespace {

using namespace detail;

bool has_raw_reasoning(const json& item) {
  const json* content = array_field(item, "content");
  if (!content) return false;
  for (const auto& part : *content) {
    if (string_or(part, "type") == "reasoning_text") return true;
  }
  return false;
}

// An output item as input: server ids dropped (store is false, so they name
// nothing), status kept only where the API wants it, raw reasoning text
// dropped (the API takes summaries and encrypted content back, not that).
json as_input_item(const json& item) {
  if (!item.is_object()) return item;
  json input = item;
  input.erase("id");
  auto type = string_or(item, "type");
  if (type != "custom_tool_call" && type != "local_shell_call") input.erase("status");
  if (type == "local_shell_call" && !string_field(item, "call_id") && string_field(item, "id")) {
    input["call_id"] = item["id"];
  }
  if (type == "reasoning" && has_raw_reasoning(item)) input.erase("content");
  return input;
}

}  // namespace

nlohmann::json user_message(std::string_view text) {
  return {{"type", "message"},
          {"role", "user"},
          {"content", json::array({{{"type", "input_text"}, {"text", std::string(text)}}})}};
}

nlohmann::json responses_request_body(const std::vector<nlohmann::json>& history,
                                      const request_options& options) {
  json input = json::array();
  for (const auto& item : history) {
    // With store false the server keeps nothing: a reasoning item goes back
    // only with its encrypted content, or it names an item that does not exist.
    if (string_or(item, "type") == "reasoning" && !string_field(item, "encrypted_content")) continue;
    input.push_back(as_input_item(item));
  }
  json body = {{"model", options.model},
               {"instructions", options.instructions},
               {"input", std::move(input)},
               {"tools", responses_tools(options.tools)},
               {"tool_choice", "auto"},
               {"parallel_tool_calls", false},
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
  json body = {{"model", options.model},
               {"messages", chat_messages(history, options.instructions)},
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
