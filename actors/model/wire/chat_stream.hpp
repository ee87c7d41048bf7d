#pragma once
// A Chat Completions stream (POST /v1/chat/completions with stream:true)
// turned into the same typed events as the Responses API (stream_events.hpp):
//
//   data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"}}]}
//   data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1",
//          "function":{"name":"exec_command","arguments":"{\"cm"}}]}}]}
//   data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}
//   data: {"choices":[],"usage":{"prompt_tokens":9,...}}
//   data: [DONE]
//
// The first chunk gives response_created; content and reasoning_content (or
// reasoning) give output_item_added then deltas. Tool calls are assembled by
// their index across chunks (id and name first, arguments in pieces). At
// [DONE] come the items as the Responses API would have sent them: a
// reasoning item, a `message` item with the whole text, one `function_call`
// item per call (call_id, name, arguments), then response_completed with the
// usage if one was sent. An `error` chunk gives response_failed.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/model/wire/sse_parser.hpp"
#include "actors/model/wire/stream_events.hpp"

namespace parley::wire {

class chat_stream {
 public:
  explicit chat_stream(std::size_t max_event_bytes = sse_parser::default_max_event_bytes)
      : sse_(max_event_bytes) {}

  std::vector<stream_event> feed(std::string_view bytes);

  /// At the end of the body: a stream that gave a finish_reason but no
  /// [DONE] (some servers omit it) is completed now. Otherwise nothing.
  std::vector<stream_event> finish();

  /// Whether the stream completed ([DONE], or finish() after a finish_reason).
  bool completed() const { return completed_; }
  bool ended() const { return ended_; }

  /// The last choice's finish_reason ("stop", "tool_calls", "length", ...).
  const std::string& finish_reason() const { return finish_reason_; }

 private:
  struct partial_call {
    std::string id;
    std::string name;
    std::string arguments;
  };

  void on_event(const sse_event& sse, std::vector<stream_event>& out);
  void on_chunk(const nlohmann::json& chunk, std::vector<stream_event>& out);
  void on_delta(const nlohmann::json& delta, std::vector<stream_event>& out);
  void on_tool_call(const nlohmann::json& call, std::int64_t position);
  void complete(std::vector<stream_event>& out);
  void end_with(stream_event event, std::vector<stream_event>& out);
  std::string item_id(const char* prefix) const;

  sse_parser sse_;
  bool created_ = false;
  std::string response_id_;
  std::string text_;
  std::string reasoning_;
  bool text_started_ = false;
  bool reasoning_started_ = false;
  std::map<std::int64_t, partial_call> calls_;  // by the chunks' tool call index
  std::optional<token_usage> usage_;
  std::string finish_reason_;
  bool completed_ = false;
  bool ended_ = false;
};

}  // namespace parley::wire
