#pragma once
// Token usage objects of both APIs, read into token_usage. Missing or
// mistyped counts read as 0.

#include <nlohmann/json.hpp>

#include "actors/model/wire/stream_events.hpp"

namespace parley::wire {

/// {input_tokens, input_tokens_details.cached_tokens, output_tokens,
///  output_tokens_details.reasoning_tokens, total_tokens}
token_usage responses_usage(const nlohmann::json& usage);

/// {prompt_tokens, prompt_tokens_details.cached_tokens, completion_tokens,
///  completion_tokens_details.reasoning_tokens, total_tokens}
token_usage chat_usage(const nlohmann::json& usage);

}  // namespace parley::wire
