#include "actors/model/wire/usage.hpp"

#include "actors/model/wire/json_fields.hpp"

namespace parley::wire {

namespace {

using namespace detail;

std::int64_t count(const json& obj, const char* key) { return int_field(obj, key).value_or(0); }

std::int64_t nested_count(const json& obj, const char* details, const char* key) {
  const json* inner = object_field(obj, details);
  return inner ? count(*inner, key) : 0;
}

token_usage read_usage(const json& usage, const char* input, const char* output,
                       const char* input_details, const char* output_details) {
  token_usage u;
  u.input_tokens = count(usage, input);
  u.cached_input_tokens = nested_count(usage, input_details, "cached_tokens");
  u.output_tokens = count(usage, output);
  u.reasoning_output_tokens = nested_count(usage, output_details, "reasoning_tokens");
  u.total_tokens = count(usage, "total_tokens");
  return u;
}

}  // namespace

token_usage responses_usage(const nlohmann::json& usage) {
  return read_usage(usage, "input_tokens", "output_tokens", "input_tokens_details",
                    "output_tokens_details");
}

token_usage chat_usage(const nlohmann::json& usage) {
  return read_usage(usage, "prompt_tokens", "completion_tokens", "prompt_tokens_details",
                    "completion_tokens_details");
}

}  // namespace parley::wire
