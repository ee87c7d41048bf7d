#pragma once
// The audit actor: owns the tamper-evident audit log and appends what the
// approval actors report. Detached (its own thread): appends are file I/O.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <optional>
#include <string>

#include "actors/approval/audit/audit_log.hpp"
#include "actors/core/atoms.hpp"
#include "actors/core/interfaces.hpp"

namespace parley {

struct audit_writer_state {
  static inline const char* name = "audit_writer";
  std::optional<audit::audit_log> log;
};

/// Appends to the log at `path` (created if missing), answering ok once a
/// line is written. A line not written (a full disk, a log that could not be
/// opened) is an error: the approval waiting on it lets nothing run.
audit_actor::behavior_type audit_writer(audit_actor::stateful_pointer<audit_writer_state> self,
                                        std::string path);

}  // namespace parley
