#pragma once
// One pending approval. It asks through the conversation (so the request is
// ordered with the thread's events), owns the deadline, and delivers exactly
// one outcome to its turn. Later stages (rules, hooks) run here too.

#include <chrono>

#include "actors/audit/audit_writer.hpp"
#include "actors/counters.hpp"
#include "actors/interfaces.hpp"

namespace parley {

struct approval_state {
  static inline const char* name = "approval";
  counted live{counters().approvals};
  bool resolved = false;
  std::chrono::steady_clock::time_point asked_at;
};

/// `audit` may be invalid (auditing off). Every approval's lifecycle goes to
/// it: requested, then exactly one of decided / timed_out / cancelled /
/// client_error / malformed / transport_closed, with the latency.
approval_actor::behavior_type approval(approval_actor::stateful_pointer<approval_state> self,
                                       conversation_actor conversation, approval_ask ask,
                                       std::chrono::milliseconds timeout, audit_actor audit);

/// Maps an error from the ask onto an outcome (pure; tested directly).
approval_outcome outcome_of_error(const caf::error& err);

}  // namespace parley
