#pragma once
// One pending approval, and the one owner of its decision (issues 4, 10, 12):
//
//   announce -> rules -> session grants -> hooks (in-process, then external
//   programs) -> clients (every subscriber; the first answer wins) -> settle
//   -> outcome
//
// The turn plans the approval once (plan.hpp) and spawns this actor with the
// plan. Only this actor tells the conversation that the thread waits, asks
// the clients (the conversation says which, in order with the thread's
// events), voids every prompt still open when it is decided, and reports the
// outcome: to the audit log (with the connection that decided), the stats
// and the turn.
//
// A deny from any stage ends the approval at once (any deny wins). An allow
// from the rules, a grant or a hook approves the action without asking the
// client, unless a rule says "ask" or a later hook denies; a hook may also
// abstain. Each waiting stage has a deadline, and a stage that fails, crashes
// or times out denies (fail closed).

#include <caf/actor_clock.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "actors/approval/audit_writer.hpp"
#include "actors/approval/plan.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"
#include "actors/core/telemetry.hpp"

namespace parley {

/// One client asked to decide, and whether its prompt is still open.
struct client_prompt {
  client_actor client;
  bool open = true;
};

struct approval_state {
  static inline const char* name = "approval";
  counted live;  // the runtime's approvals
  conversation_actor conversation;
  approval_ask ask;
  approval_plan plan;
  runtime_services svc;
  notification_ptr item_started;  // announced in Codex's order (may be null)
  hooks::review_request review;
  caf::typed_response_promise<approval_outcome> promise;
  bool started = false;
  bool resolved = false;
  std::vector<client_prompt> prompts;  // every client asked (the client stage)
  std::string decided_by;              // the connection whose answer decided
  caf::actor_clock::time_point asked_at;  // on the actor clock (tests move it)
  // -- pipeline progress --
  std::optional<std::string> allowed_by;  // the first stage that allowed
  std::string allow_reason;
  bool must_ask = false;       // a rule said "ask": only the client may allow
  size_t next_hook = 0;        // in-process hooks first, then external programs
  uint64_t waiting_token = 0;  // the stage waited for (0: none)
  std::string waiting_stage;
  caf::actor_addr runner_addr;  // the external hook program running, if any
  // -- durability --
  /// The action as the store keeps it: stored `asked` before any client is
  /// asked, then `decided` before the turn hears the outcome.
  action_record record;
  /// Asked before a restart: asked again as it was, with the stored deadline.
  bool restored = false;
  bool asked_durably = false;  // the asked phase is stored
  // -- after the outcome --
  /// Withdrawals sent and not yet acknowledged. A client's messages keep
  /// their order, so an answer it sent before it read the withdrawal arrives
  /// before the acknowledgement: the approval stays until then, and refuses
  /// it (logged, counted) rather than let it fall on a dead actor.
  size_t withdrawals_unacknowledged = 0;
  bool ending = false;     // over: it quits once every withdrawal is acknowledged
  caf::error exit_reason;  // what it quits with then
};

/// `item_started` is the item's item/started event: the approval sends it
/// to the conversation itself, before the waiting status for a file change
/// and after it for a command, as Codex orders them.
/// `record` is the action as the store keeps it; `restored`: its ask was
/// stored before a restart (record.deadline_ms holds), and it goes straight
/// to the clients.
approval_actor::behavior_type approval(approval_actor::stateful_pointer<approval_state> self,
                                       conversation_actor conversation, approval_ask ask,
                                       approval_plan plan, runtime_services svc,
                                       notification_ptr item_started, action_record record,
                                       bool restored);

/// Plans an ask with this runtime's rules (a snapshot, read once), hooks and
/// the thread's grants.
approval_plan plan_for(const runtime_services& svc, const session_grants& grants,
                       const approval_ask& ask, policy_verdict verdict);

/// Maps an error from the ask onto an outcome (pure; tested directly).
approval_outcome outcome_of_error(const caf::error& err);

}  // namespace parley
