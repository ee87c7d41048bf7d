#pragma once
// What the model is sent of a long tool output, as Codex 0.169 cuts it: the
// middle goes, the head and the tail stay (never split inside a UTF-8
// sequence), and a marker in their place says how much went:
// "…N tokens truncated…" under a token budget, "…N chars truncated…" under
// a byte budget. Tokens are counted as Codex approximates them: 4 bytes
// each, rounded up. Pure: the model actor applies it to every tool output
// it adds to a thread's context; the item the client sees stays whole.

#include <cstddef>
#include <string>
#include <string_view>

#include "protocol/json_codec.hpp"

namespace parley::protocol {

struct truncation_policy {
  enum class unit { bytes, tokens };
  unit in = unit::tokens;
  size_t limit = 0;

  size_t byte_budget() const;
  size_t token_budget() const;
  /// The budget times `factor`, rounded up (Codex gives a tool output 20%
  /// more than the model's limit for its serialisation: scaled(1.2)).
  truncation_policy scaled(double factor) const;
};

/// Codex's estimate of a text's tokens: its bytes / 4, rounded up.
size_t approx_token_count(std::string_view text);

/// The policy Codex 0.169 applies to a model's tool outputs, before its 20%:
/// 10000 tokens for the models it ships (its models.json), 2500 for any
/// other; `token_limit` (config tool_output_token_limit), when not 0,
/// replaces either.
truncation_policy tool_output_policy(std::string_view model, size_t token_limit = 0);

/// `text` within the policy's budget: whole when it fits; else its first and
/// last budget/2 bytes (on character boundaries) around the marker.
std::string truncate_text(std::string_view text, const truncation_policy& policy);

/// A function_call_output's content parts within one budget, in order: text
/// parts spend it (an empty one is dropped), the one that overruns it is cut
/// as truncate_text cuts, the text parts after it are left out and counted
/// in a last part "[omitted N text items ...]"; images cost nothing here.
json truncate_output_parts(const json& parts, const truncation_policy& policy);

}  // namespace parley::protocol
