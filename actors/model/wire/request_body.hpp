#pragma once
// The JSON bodies of a model request, built from the conversation's history:
// a list of Responses API items (user and assistant `message` items,
// `reasoning` items, call items each followed by the output with its
// call_id) as the streams of this library hand them over.
//
// Responses (POST /v1/responses), as Codex 0.169 sends it:
//   {model, instructions, input, tools, tool_choice: "auto",
//    parallel_tool_calls: true, store: false, stream: true, include,
//    reasoning?, prompt_cache_key?}
//   include is ["reasoning.encrypted_content"] when reasoning is set, else [].
//   Items go without their server ids (nothing is stored server-side, so
//   an id would point at nothing).
// Chat Completions (POST /v1/chat/completions):
//   {model, messages (chat_messages.hpp), tools, tool_choice: "auto",
//    stream: true, stream_options: {include_usage: true}, reasoning_effort?}

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/model/wire/tools.hpp"

namespace parley::wire {

struct request_options {
  std::string model;
  std::string instructions;
  /// Leads the input as a developer message when not empty.
  std::string developer_instructions;
  /// The Responses "reasoning" object, e.g. {"effort":"medium","summary":"auto"};
  /// left out unless configured. Chat requests send its effort as reasoning_effort.
  std::optional<nlohmann::json> reasoning;
  /// Lets the provider reuse a cached prompt prefix (Codex sends the thread id).
  std::optional<std::string> prompt_cache_key;
  /// Responses only: the tool shapes the server accepts.
  tool_flavour tools = tool_flavour::responses;
  /// false: no tool is offered (a compaction's summary request): Responses
  /// sends `tools: []`, Chat no tools at all.
  bool offer_tools = true;
  /// Function tools offered besides exec_command and apply_patch (the
  /// Responses shape: {type: "function", name, description, parameters}).
  std::vector<nlohmann::json> extra_tools;
};

/// A user message item: {"type":"message","role":"user","content":[{"type":"input_text","text":...}]}.
nlohmann::json user_message(std::string_view text);

nlohmann::json responses_request_body(const std::vector<nlohmann::json>& history,
                                      const request_options& options);

/// body_text(responses_request_body(history, options)), byte for byte,
/// written without the body's DOM: its fields in nlohmann's (sorted) order,
/// parley's own tools as text made once (responses_tools_text). A model
/// request is sent per step of every turn; its tools are most of its bytes.
std::string responses_request_text(const std::vector<nlohmann::json>& history,
                                   const request_options& options);

nlohmann::json chat_request_body(const std::vector<nlohmann::json>& history,
                                 const request_options& options);

/// The body as text; invalid UTF-8 (a command's output, say) is replaced
/// rather than thrown on.
std::string body_text(const nlohmann::json& body);

}  // namespace parley::wire
