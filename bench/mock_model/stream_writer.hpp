#pragma once
// Writes a planned stream as the body of a cpp-httplib response (chunked, text/event-stream),
// one event per write, with its pauses, stall and cut.

#include <httplib.h>

#include "bench/mock_model/stream.hpp"

namespace parley::mock_model {

void write_stream(stream_plan plan, httplib::Response& res);

}  // namespace parley::mock_model
