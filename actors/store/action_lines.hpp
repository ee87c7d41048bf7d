#pragma once
// action_record as a rollout line of parley's own kind,
//
//   {"timestamp":"…Z","type":"parley_action","payload":{"phase":"asked", …}}
//
// which Codex's readers skip (an unknown record type). Kept in the rollout,
// in order with the turn's items, rather than only in the index: the
// rollout is the truth the index is rebuilt from, and one append orders an
// action's phases with the item that ends it.

#include <nlohmann/json.hpp>
#include <optional>

#include "actors/core/messages.hpp"

namespace parley::store {

/// The record type of action lines.
inline constexpr const char* action_line_type = "parley_action";

nlohmann::json action_payload(const action_record& r);

/// nullopt for a payload that is not an action record (skipped, as any
/// unreadable line).
std::optional<action_record> action_of_payload(const nlohmann::json& p);

}  // namespace parley::store
