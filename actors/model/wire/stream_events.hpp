#pragma once
// The typed events a model stream produces, whichever API it came from: the
// Responses API maps onto them one to one (responses_stream), Chat
// Completions chunks are assembled into the same shapes (chat_stream), so
// the rest of parley handles one kind of stream.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace parley::wire {

/// The provider accepted the request (response.created).
struct response_created {
  std::string response_id;
};

/// An output item began (response.output_item.added): the item as known so
/// far, e.g. {"type":"message","id":"msg_1","role":"assistant","content":[]}.
struct output_item_added {
  nlohmann::json item;
};

/// A piece of the assistant's visible text.
struct text_delta {
  std::string item_id;
  std::string delta;
};

/// A piece of reasoning: a summary's text (`summary`, indexed by
/// summary_index) or the raw reasoning text (indexed by content_index).
struct reasoning_delta {
  std::string item_id;
  std::string delta;
  bool summary = true;
  std::int64_t index = 0;
};

/// An output item is final (response.output_item.done). The whole item is
/// kept: message, reasoning, function_call, custom_tool_call,
/// local_shell_call, ... It is what goes into the history.
struct output_item_done {
  nlohmann::json item;
};

/// Token counts as the Responses API reports them (Chat Completions'
/// prompt/completion counts are mapped onto the same fields).
struct token_usage {
  std::int64_t input_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t reasoning_output_tokens = 0;
  std::int64_t total_tokens = 0;
};

/// The response ended normally; nothing follows.
struct response_completed {
  std::string response_id;
  std::optional<token_usage> usage;
};

/// The provider reported a failure (response.failed, response.incomplete,
/// an error event or an error chunk); nothing follows.
struct response_failed {
  std::string message;
  std::string code;  // e.g. "rate_limit_exceeded", "incomplete"; may be empty
};

/// The stream broke its protocol (data that is not JSON, a known event
/// without its required fields, an oversized event); nothing follows.
struct stream_error {
  std::string message;
};

using stream_event = std::variant<response_created, output_item_added, text_delta,
                                  reasoning_delta, output_item_done, response_completed,
                                  response_failed, stream_error>;

/// Whether nothing may follow this event: completed, failed or broken.
inline bool ends_stream(const stream_event& event) {
  return std::holds_alternative<response_completed>(event) ||
         std::holds_alternative<response_failed>(event) ||
         std::holds_alternative<stream_error>(event);
}

}  // namespace parley::wire
