#pragma once
// A response as OpenAI Chat Completions streams it (`data: JSON` chunks, then `data: [DONE]`).

#include "bench/mock_model/stream.hpp"

namespace parley::mock_model {

/// A role chunk, content deltas (`reasoning_content` for reasoning), tool calls whose
/// arguments are split over several chunks, the finish_reason, the usage chunk when asked
/// for, then [DONE]. With a failure: an `error` chunk after the role chunk, and no [DONE].
rendered_stream chat_stream(const stream_request& request);

}  // namespace parley::mock_model
