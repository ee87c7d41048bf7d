#pragma once
// Writes a planned stream as the body of a cpp-httplib response (chunked, text/event-stream),
// one event per write, with its pauses, stall and cut.

#include <httplib.h>

#include <cstddef>

#include "bench/mock_model/stream.hpp"

namespace parley::mock_model {

void write_stream(stream_plan plan, httplib::Response& res);

/// Streams being written now, and the most there ever were at once (GET /mock/stats). A
/// stream stops counting just before its last chunk, so a client that starts its next request
/// once it has read a whole response never sees its old one counted.
struct stream_counts {
  std::size_t open = 0;
  std::size_t most = 0;
};
stream_counts streams();

}  // namespace parley::mock_model
