#pragma once
// A review's words, in parley's own: what the client is shown of the target,
// what the reviewing model is told, and how its answer becomes the review.
// Pure functions: no actors, no I/O.

#include <nlohmann/json.hpp>
#include <string>

#include "actors/threads/review_git.hpp"
#include "protocol/review.hpp"

namespace parley::review {

/// A short label of the target for the client (enteredReviewMode.review).
std::string hint(const protocol::review_target& t);

/// How the reviewer works and answers (its developer message).
const std::string& instructions();

/// What the reviewer is asked to review, with what git said of it.
std::string prompt(const protocol::review_target& t, const review_facts& f);

}  // namespace parley::review
