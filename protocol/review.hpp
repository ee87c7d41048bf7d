#pragma once
// review/start (Codex 0.169's v2 shapes): what a review looks at, and the
// turn that runs it.

#include <optional>
#include <string>

#include "protocol/json_codec.hpp"
#include "protocol/types.hpp"

namespace parley::protocol {

/// What a review looks at (ReviewTarget): the working tree's changes, the
/// changes since a base branch, one commit, or free-form instructions.
struct review_target {
  enum class kind { uncommitted_changes, base_branch, commit, custom };
  kind type = kind::uncommitted_changes;
  std::string branch;                // base_branch
  std::string sha;                   // commit
  std::optional<std::string> title;  // commit: a label for UIs
  std::string instructions;          // custom
};
void from_json(const json& j, review_target& x);
void to_json(json& j, const review_target& x);

struct review_start_params {
  std::string thread_id;
  review_target target;
  /// Only "inline" exists in 0.169's schema: the review runs on the thread
  /// itself (anything else is refused while decoding, as Codex does).
};
void from_json(const json& j, review_start_params& x);

/// Why a decoded target cannot be reviewed (Codex's words), or nothing.
std::optional<std::string> review_target_refusal(const review_target& x);

struct review_start_response {
  turn turn_;
  std::string review_thread_id;  // the thread the review runs on: the one asked
};
void to_json(json& j, const review_start_response& x);

/// A reviewer's answer: its structured form (Codex's ReviewOutputEvent:
/// findings, overall_correctness, overall_explanation,
/// overall_confidence_score) and the text a client is shown. An answer that
/// is not that JSON is the explanation itself, with no findings.
struct review_verdict {
  json output;
  std::string text;
};
review_verdict read_review_answer(const std::string& answer);

/// A review's text from its structured form (as a rollout keeps it).
std::string render_review(const json& output);

}  // namespace parley::protocol
