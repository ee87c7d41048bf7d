#pragma once
// Inside the approval actor: the steps its stages share. Only approval*.cpp
// include this; everybody else talks to an approval through approval_actor.
//
//   approval.cpp          the factory, the messages it hears, start and finish
//   approval_hooks.cpp    the hook stages (in-process hooks, hook programs)
//   approval_clients.cpp  the client stage: every subscribed client is asked,
//                         the first answer wins

#include <functional>

#include "actors/approval/approval.hpp"

namespace parley::approval_detail {

using self_ptr = approval_actor::stateful_pointer<approval_state>;

// -- approval.cpp ------------------------------------------------------------

approval_ref ref_of(const approval_ask& ask);

/// Delivers the one outcome of this approval and ends it: every prompt still
/// open is voided, the conversation hears (the thread no longer waits), then
/// the audit log, the stats and the turn.
void finish(self_ptr self, approval_outcome out);

/// Stores the asked phase, then runs `then`; an ask that cannot be stored
/// is never asked (the approval fails closed).
void ask_durably(self_ptr self, std::function<void()> then);

/// finish() with a decision.
void decide(self_ptr self, protocol::approval_decision d, std::string stage, std::string detail);

/// Applies one stage's verdict. Returns false when the approval is over.
bool take_verdict(self_ptr self, const std::string& stage, const hooks::verdict& v);

/// Names the stage whose answer may come later (as hook_reply or deadline
/// with the returned token); any other token is a late or foreign answer.
uint64_t reserve_token(self_ptr self, std::string stage);

// -- approval_hooks.cpp ------------------------------------------------------

/// Runs the hooks from `next_hook` on (in-process ones, then external
/// programs), until one waits or all answered; then the client stage.
void continue_hooks(self_ptr self);

// -- approval_clients.cpp ----------------------------------------------------

/// The last stage: nobody denied; approve if a stage allowed (and no rule
/// insists on asking), otherwise ask every client that can answer.
void ask_clients(self_ptr self);

/// A client subscribed while the clients are asked: ask it too.
void ask_also(self_ptr self, const client_actor& client);

/// The client stage's deadline passed: fail closed.
void client_deadline(self_ptr self);

/// Voids every prompt still open (serverRequest/resolved for each copy);
/// each client acknowledges its withdrawal.
void withdraw_open_prompts(self_ptr self);

/// The approval is over (its outcome delivered, or parked): it quits with
/// `reason` once every withdrawal is acknowledged, so that an answer sent
/// before a client read its withdrawal is still heard, and refused.
void end_after_withdrawals(self_ptr self, caf::error reason);

}  // namespace parley::approval_detail
