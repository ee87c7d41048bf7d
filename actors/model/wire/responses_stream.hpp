#pragma once
// The Responses API's event stream (POST /v1/responses with stream:true),
// mapped onto stream_events.hpp as Codex consumes it:
//
//   response.created                       -> response_created
//   response.output_item.added             -> output_item_added
//   response.output_text.delta             -> text_delta
//   response.reasoning_summary_text.delta  -> reasoning_delta (summary)
//   response.reasoning_text.delta          -> reasoning_delta (raw)
//   response.output_item.done              -> output_item_done (the whole item)
//   response.completed                     -> response_completed (id, usage)
//   response.failed, response.incomplete,
//   error                                  -> response_failed
//
// Every other event is ignored. Data that is not a JSON object, or a known
// event without its required fields, becomes a stream_error. Nothing throws.

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "actors/model/wire/sse_parser.hpp"
#include "actors/model/wire/stream_events.hpp"

namespace parley::wire {

/// One server-sent event as a typed event, or nothing for events parley does
/// not use. The event's type is the data's "type" (the SSE event name when
/// the data has none).
/// Text and reasoning deltas, and the events parley does not use, are read
/// by a scanner (delta_scan.hpp); the rest, and anything it does not fully
/// recognise, through nlohmann.
std::optional<stream_event> map_responses_event(const sse_event& event);

/// The same through nlohmann alone: the reference the scanner is tested
/// against.
std::optional<stream_event> map_responses_event_dom(const sse_event& event);

/// A whole response stream: bytes in, typed events out. After the stream's
/// end (completed, failed or a stream_error) further input is ignored.
class responses_stream {
 public:
  explicit responses_stream(std::size_t max_event_bytes = sse_parser::default_max_event_bytes)
      : sse_(max_event_bytes) {}

  std::vector<stream_event> feed(std::string_view bytes);

  /// Whether response.completed was seen. A body that ends without it is a
  /// broken stream; the caller decides what to tell the user.
  bool completed() const { return completed_; }

  /// Whether the stream ended: completed, failed or broken.
  bool ended() const { return ended_; }

 private:
  sse_parser sse_;
  bool completed_ = false;
  bool ended_ = false;
};

}  // namespace parley::wire
