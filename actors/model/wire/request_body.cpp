#include "actors/model/wire/request_body.hpp"

#include <iterator>

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

namespace {

/// What a request sends of `history`, the developer instructions first.
json input_of(const std::vector<json>& history, const request_options& options) {
  json input = request_history(history);
  if (!options.developer_instructions.empty())
    input.insert(input.begin(),
                 json{{"type", "message"},
                      {"role", "developer"},
                      {"content", json::array({{{"type", "input_text"},
                                                {"text", options.developer_instructions}}})}});
  return input;
}

}  // namespace

nlohmann::json responses_request_body(const std::vector<nlohmann::json>& history,
                                      const request_options& options) {
  json body = {{"model", options.model},
               {"instructions", options.instructions},
               {"input", input_of(history, options)},
               {"tools", options.offer_tools ? responses_tools(options.tools, options.extra_tools)
                                             : json::array()},
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

std::string responses_request_text(const std::vector<nlohmann::json>& history,
                                   const request_options& options) {
  // The keys in the order nlohmann's object (a std::map) dumps them.
  std::string out = options.reasoning ? R"({"include":["reasoning.encrypted_content"],"input":)"
                                      : R"({"include":[],"input":)";
  out += dump(input_of(history, options));
  out += R"(,"instructions":)";
  out += dump(json(options.instructions));
  out += R"(,"model":)";
  out += dump(json(options.model));
  out += R"(,"parallel_tool_calls":true)";
  if (options.prompt_cache_key) {
    out += R"(,"prompt_cache_key":)";
    out += dump(json(*options.prompt_cache_key));
  }
  if (options.reasoning) {
    out += R"(,"reasoning":)";
    out += dump(*options.reasoning);
  }
  out += R"(,"store":false,"stream":true,"tool_choice":"auto","tools":)";
  out += options.offer_tools ? responses_tools_text(options.tools, options.extra_tools) : "[]";
  out += '}';
  return out;
}

nlohmann::json chat_request_body(const std::vector<nlohmann::json>& history,
                                 const request_options& options) {
  auto sendable = input_of(history, options);
  std::vector<json> items(std::make_move_iterator(sendable.begin()),
                          std::make_move_iterator(sendable.end()));
  json body = {{"model", options.model},
               {"messages", chat_messages(items, options.instructions)},
               {"tools", chat_tools(options.extra_tools)},
               {"tool_choice", "auto"},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (!options.offer_tools) {
    body.erase("tools");
    body.erase("tool_choice");
  }
  if (options.reasoning) {
    if (const std::string* effort = string_field(*options.reasoning, "effort")) {
      body["reasoning_effort"] = *effort;
    }
  }
  return body;
}

std::string body_text(const nlohmann::json& body) { return dump(body); }

}  // namespace parley::wire
