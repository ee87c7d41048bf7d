#pragma once
// Collects a command's output: hands out deltas that never split a UTF-8
// sequence, keeps at most `cap` bytes for aggregatedOutput, and counts what
// it dropped.

#include <cstddef>
#include <string>

namespace parley {

class output_buffer {
 public:
  explicit output_buffer(size_t cap) : cap_(cap) {}

  /// Adds raw bytes; returns the text to stream now (may be empty).
  std::string add(const std::string& bytes);

  /// Call at end of output: returns any trailing incomplete bytes (as
  /// replacement-safe text) to stream.
  std::string finish();

  /// The kept output, with a note when some was dropped.
  std::string aggregated() const;

  size_t dropped() const { return dropped_; }

 private:
  std::string accept(std::string text);

  size_t cap_;
  std::string kept_;
  std::string pending_;  // an incomplete UTF-8 sequence from the last chunk
  size_t dropped_ = 0;
};

/// Length of the longest prefix of `s` that does not end inside a UTF-8
/// sequence (invalid bytes count as complete; the JSON encoder replaces them).
size_t utf8_complete_prefix(const std::string& s);

}  // namespace parley
