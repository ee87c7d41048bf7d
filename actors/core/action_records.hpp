#pragma once
// An approval's outcome as an action record keeps it, and back: the decided
// phase must say exactly what the turn would have been told, so that a
// restart tells it the same.

#include <optional>
#include <string>

#include "actors/core/messages.hpp"

namespace parley {

/// Writes `out` into the decided phase of `record`.
void store_outcome(action_record& record, const approval_outcome& out);

/// The outcome a decided record holds; a record that does not decode is a
/// failure (fail closed: nothing runs).
approval_outcome outcome_of(const action_record& record);

/// "asked", "decided", "started", and back (nullopt: unknown).
std::optional<action_record::phase> phase_from(const std::string& text);

}  // namespace parley
