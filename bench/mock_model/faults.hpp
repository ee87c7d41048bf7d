#pragma once
// Which fault hits an attempt, and what it does to the stream. A fault that hits N times
// counts attempts of the same request (same input) in a bounded table.

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "bench/mock_model/script.hpp"
#include "bench/mock_model/stream.hpp"

namespace parley::mock_model {

class fault_counter {
 public:
  /// Remembers at most `capacity` faults; the oldest are forgotten first (and would hit again).
  explicit fault_counter(std::size_t capacity = 10000) : capacity_(capacity > 0 ? capacity : 1) {}

  /// The fault that hits this attempt of response `response_number` of a request whose
  /// input is `input_key`: the first of the script's faults for that response that has hit
  /// fewer than `times` attempts so far. At most one fault hits an attempt, so
  /// `http 500 times=2` then `cut` gives 500, 500, a cut stream, then a whole one.
  const fault* hit(const script& s, std::size_t response_number, const std::string& input_key);

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::unordered_map<std::string, unsigned> hits_;
  std::deque<std::string> order_;
};

/// The plan for writing a rendered stream under a stream fault (cut, stall, malformed; the
/// others do not get this far) or none.
stream_plan plan_stream(std::vector<sse_event> events, const fault* hit, long pace_ms);

}  // namespace parley::mock_model
