#pragma once
// What a streamed answer is made of, whichever API it speaks: the events (SSE frames, in
// order) and when to pause, stall or cut the connection while writing them.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/mock_model/script.hpp"

namespace parley::mock_model {

struct sse_event {
  /// The whole frame, through its blank line.
  std::string bytes;
  /// A `*.delta` event (a stall waits after the first of them).
  bool is_delta = false;
};

/// What the renderers are asked to stream.
struct stream_request {
  /// The script's actions for this response; empty means the message `done`.
  std::vector<action> actions;
  /// The historic stream: no added/delta events (a request without directives).
  bool plain = false;
  std::string model;
  token_usage usage;
  /// A `failed` fault: the stream ends with this error instead of completing.
  std::optional<std::string> failure;
  /// Chat Completions: send the usage chunk (`stream_options.include_usage`).
  bool include_usage = false;
};

struct rendered_stream {
  std::vector<sse_event> events;
  /// For the log: the response id and what it carries.
  std::string summary;
};

/// How to write a rendered stream.
struct stream_plan {
  std::vector<sse_event> events;
  long pace_ms = 0;
  /// Send only the first half of this event, then close the connection.
  std::optional<std::size_t> cut_at;
  /// After this event, send nothing for stall_ms, then go on (or close).
  std::optional<std::size_t> stall_after;
  long stall_ms = 0;
  bool close_after_stall = false;
};

/// A text as a model streams it: a word (with the spaces after it) per piece, no piece
/// longer than `max_bytes`, never splitting a UTF-8 sequence.
std::vector<std::string> word_pieces(std::string_view text, std::size_t max_bytes = 6);

/// A text in `parts` pieces of about the same size (fewer if it is shorter), never
/// splitting a UTF-8 sequence.
std::vector<std::string> even_pieces(std::string_view text, std::size_t parts);

}  // namespace parley::mock_model
