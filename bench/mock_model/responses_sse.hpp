#pragma once
// A response as the OpenAI Responses API streams it (`event: TYPE` / `data: JSON` frames).

#include "bench/mock_model/stream.hpp"

namespace parley::mock_model {

/// response.created, the items (output_item.added, their deltas, output_item.done), then
/// response.completed with the usage; or, with a failure, response.failed after created.
/// A plain request gets only created, output_item.done and completed (the historic stream).
rendered_stream responses_stream(const stream_request& request);

}  // namespace parley::mock_model
