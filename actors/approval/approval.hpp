#pragma once
// One pending approval, and its pipeline (issue 4):
//
//   rules -> session grants -> hooks (in-process, then external programs) -> client
//
// A deny from any stage ends the approval at once (any deny wins). An allow
// from the rules, a grant or a hook approves the action without asking the
// client, unless a rule says "ask" or a later hook denies; a hook may also
// abstain. Each waiting stage has a deadline, and a stage that fails, crashes
// or times out denies (fail closed). Whatever happens, the turn gets exactly
// one outcome, and the audit log and the stats record it with the stage that
// decided.

#include <chrono>
#include <optional>
#include <string>

#include "actors/approval/audit/audit_writer.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/approval/policy.hpp"
#include "actors/core/services.hpp"
#include "actors/core/telemetry.hpp"

namespace parley {

struct approval_state {
  static inline const char* name = "approval";
  counted live;  // the runtime's approvals
  conversation_actor conversation;
  approval_ask ask;
  runtime_services svc;
  session_grants grants;
  hooks::review_request review;
  caf::typed_response_promise<approval_outcome> promise;
  bool started = false;
  bool resolved = false;
  std::chrono::steady_clock::time_point asked_at;
  // -- pipeline progress --
  std::optional<std::string> allowed_by;  // the first stage that allowed
  std::string allow_reason;
  bool must_ask = false;   // a rule said "ask": only the client may allow
  size_t next_hook = 0;    // in-process hooks first, then external programs
  uint64_t waiting_token = 0;  // the stage waited for (0: none)
  std::string waiting_stage;
  caf::actor_addr runner_addr;  // the external hook program running, if any
};

approval_actor::behavior_type approval(approval_actor::stateful_pointer<approval_state> self,
                                       conversation_actor conversation, approval_ask ask,
                                       runtime_services svc, session_grants grants);

/// Maps an error from the ask onto an outcome (pure; tested directly).
approval_outcome outcome_of_error(const caf::error& err);

/// What the rules say about an ask: a command by its words (a command with
/// shell syntax beyond simple words matches no rule), a file change by every
/// path it touches. nullopt: no rule applies.
std::optional<rules::match> check_rules(const rules::rule_set& rules, const approval_ask& ask);

/// Whether the session grants cover the ask's command or every file.
bool granted(const approval_ask& ask, const session_grants& grants);

/// Whether the pipeline will decide without waiting for anyone (a rule
/// denies, or a rule or grant allows and no hook reviews it): then the
/// thread never shows waitingOnApproval for it.
bool decided_without_waiting(const approval_ask& ask, const session_grants& grants,
                             const runtime_services& svc);

/// The review request the hooks see for an ask.
hooks::review_request review_of(const approval_ask& ask);

}  // namespace parley
