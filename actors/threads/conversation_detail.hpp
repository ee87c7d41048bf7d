#pragma once
// Inside the conversation actor: the steps its handlers share. Only
// conversation*.cpp include this; everybody else talks to a conversation
// through conversation_actor.
//
//   conversation.cpp          the factory: the messages it handles, client requests
//   conversation_events.cpp   the outbox, status, subscribers, unloading
//   conversation_turns.cpp    starting and ending turns; relaying approvals' asks
//   conversation_edits.cpp    metadata, revert and injected history

#include <functional>

#include "actors/threads/conversation.hpp"

namespace parley::conversation_detail {

using self_ptr = conversation_actor::stateful_pointer<conversation_state>;

// -- events (conversation_events.cpp) ----------------------------------------

/// Queues an action behind everything already queued.
void post(self_ptr self, std::function<void()> deliver);

/// Queues an action that runs once `record` is stored (ephemeral threads
/// store nothing). If the store fails it, the action never runs and the
/// active turn stops, to end failed (fail_turn_on_store).
void post_stored(self_ptr self, store_record record, std::function<void()> deliver);

/// A record of turn `turn_id` was not stored: if it is still the active
/// turn, it is interrupted and ends failed, naming the store's reason.
void fail_turn_on_store(self_ptr self, const std::string& turn_id, const caf::error& err);

/// Queues `done` behind everything already queued; it runs once `record`
/// is stored, with the store's error if it was not (none: stored).
void post_durable(self_ptr self, store_record record, std::function<void(caf::error)> done);

/// A notification for every subscriber, in order.
void emit(self_ptr self, notification_ptr n);

/// Several notifications in a row, in order.
void emit(self_ptr self, notification_batch batch);

/// Sends `n` to every subscriber: only from an action the outbox runs
/// (which is its turn in the order). The events one run of the outbox
/// broadcasts in a row leave as one message per subscriber, when the run
/// ends or before an action that does more than broadcast (issue 23).
void broadcast(self_ptr self, const notification_ptr& n);
/// Several events, in order (one message to each subscriber, or gathered).
void broadcast(self_ptr self, notification_batch batch);

/// Sends what the outbox's run has gathered so far: first thing in an
/// action that replies or asks (post() and post_durable() do it for theirs).
void send_gathered(self_ptr self);

/// The same, sent only once `record` is stored.
void emit_stored(self_ptr self, store_record record, notification_ptr n);

/// Emits thread/status/changed when the status moved.
void update_status(self_ptr self);

/// Adds a subscriber; false when it was one already.
bool subscribe(self_ptr self, const client_actor& client);

/// Backpressure (issue 22): a subscriber is behind in reading, or caught
/// up; one that unsubscribes or leaves is forgotten. apply_pressure tells
/// the active turn whether to hold its model stream (a new turn too).
void on_client_pressure(self_ptr self, const client_actor& client, bool on);
void forget_pressure(self_ptr self, const client_actor& client);
void apply_pressure(self_ptr self);

/// Loads this thread's stored history for a reply, keeping the actor alive
/// until `then` or `fail` has delivered it.
void load_history(self_ptr self, std::function<void(stored_thread&)> then,
                  std::function<void(caf::error&)> fail);

/// The answer to a request that reaches a thread which is unloading.
caf::error unloading_error(self_ptr self);

/// Whether the thread may unload while its turn runs: nobody is
/// subscribed and the turn only waits on approvals whose asks are stored.
bool can_park(const conversation_state& st);

/// Unloads a thread whose turn waits on a person: its turn and approval
/// stop without deciding or storing anything, so the ask stays pending in
/// the store as it is; a resume, or its deadline, loads it back and the
/// turn goes on (as after a restart). Waiting then costs no memory.
void park(self_ptr self);

/// Unloads the thread after `idle_unload` without subscribers or turns (or
/// with a turn that can park).
void arm_idle_timer(self_ptr self);

/// The thread unloads: subscribers learn it (status notLoaded,
/// thread/closed), waiters get their ok, and the actor quits once the outbox
/// is drained and nothing waits on the store.
void close(self_ptr self);

/// Quits if the thread is unloading and nothing is left to deliver.
void quit_if_done(self_ptr self);

// -- edits (conversation_edits.cpp) ------------------------------------------

/// thread/metadata/update, thread/revert, thread/inject_items.
caf::result<thread_edit_answer> edit_thread(self_ptr self, thread_edit& edit);

/// The answer to a turn asked for while a revert rewrites the history.
caf::error reverting_error(self_ptr self);

// -- turns (conversation_turns.cpp) ------------------------------------------

caf::result<protocol::turn_start_response> start_turn(self_ptr self,
                                                      protocol::turn_start_params& params,
                                                      client_actor client);

/// thread/shellCommand: a turn that runs the user's command (ok at once, its
/// events after), or an error when a turn runs already.
caf::result<atom::ok> start_shell_turn(self_ptr self,
                                       const protocol::thread_shell_command_params& params,
                                       client_actor client);

/// turn/steer: Codex's checks (an active turn, the expected one, some
/// input), then the input goes to the turn.
/// thread/compact/start: a turn of its own that compacts the thread's
/// history through the model (ok at once; its events follow); refused while
/// a turn runs.
caf::result<atom::ok> start_compact_turn(self_ptr self, client_actor client);
/// review/start: a turn of its own that reviews the target through the
/// model (its turn at once; its events follow); refused while a turn runs.
caf::result<protocol::review_start_response> start_review_turn(
    self_ptr self, protocol::review_start_params& params, client_actor client);
caf::result<protocol::turn_steer_response> steer_turn(self_ptr self,
                                                      protocol::turn_steer_params& params);

/// Hands the active turn more input from the user; `done` hears whether
/// the turn took it.
void steer_active(self_ptr self, std::vector<protocol::user_input> input,
                  std::optional<std::string> client_id,
                  std::function<void(const caf::error&)> done);

/// The turn reported its end (or died): store and announce it.
void finalize_turn(self_ptr self, turn_result result);

/// Sends the active turn its exit signal (once).
void interrupt_active(self_ptr self);

/// What the conversation knows of its turns beyond the store: the one it
/// runs, and the one it ended last (whose end may still be on its way to the
/// store).
struct turn_marks {
  std::optional<std::string> active_id;
  std::optional<protocol::turn> last_ended;
};

/// Taken when a load of the history is sent, so what the load returns (every
/// record sent before it) and the marks describe the same moment: taken at
/// the reply instead, a turn that ended meanwhile would read as ended without
/// the items it stored after the load was read.
turn_marks marks_now(const conversation_state& st);

/// A stored turn without an end record reads back as interrupted; the one
/// the conversation was running is in progress, and the one it had ended
/// last reads as it ended.
void mark_turns(const turn_marks& marks, std::vector<protocol::turn>& turns);

/// Which clients an approval may ask: every subscriber, answered once every
/// event queued before has left.
caf::result<client_list> clients_to_ask(self_ptr self, const approval_ref& ref);

/// An MCP server's elicitation for this thread (atom::elicit): its approval
/// actor, spawned with the thread's services, not started. Refused when its
/// turn (if it names one) is not the active one.
caf::result<approval_actor> start_elicitation(self_ptr self, approval_ask& ask);

/// An approval waits on someone: the thread shows waitingOnApproval, and a
/// client that subscribes meanwhile is offered to it.
void mark_waiting(self_ptr self, const approval_ref& ref, const approval_actor& approval);

/// An approval has its outcome: its item no longer waits.
void settle_ask(self_ptr self, const approval_ref& ref);

/// A client that just subscribed is asked by every approval still waiting
/// (a reconnect gets its pending approvals again).
void offer_waiting_approvals(self_ptr self, const client_actor& client);

/// Goes on with a turn whose action the store kept (after a restart).
void restore_turn(self_ptr self, resumed_turn& r);

}  // namespace parley::conversation_detail
