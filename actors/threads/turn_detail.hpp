#pragma once
// Private to the turn (turn.cpp, turn_events.cpp): the events it reports to
// its conversation, and what it hears from its model while the model speaks
// (message and reasoning pieces, usage, retries).

#include <functional>
#include <string>
#include <utility>

#include "actors/approval/plan.hpp"
#include "actors/threads/turn.hpp"

namespace parley::turn_detail {

using self_ptr = turn_actor::stateful_pointer<turn_state>;

/// An event to the conversation (gathered while a batch is taken).
void send_event(self_ptr self, notification_ptr n);

template <class T>
void emit(self_ptr self, T&& n, std::shared_ptr<const void> credit = {}) {
  send_event(self, make_event(self->state.svc, std::forward<T>(n), std::move(credit)));
}

notification_ptr started_event(self_ptr self, protocol::thread_item item, int64_t at_ms);
void item_started(self_ptr self, protocol::thread_item item, int64_t at_ms);
void item_completed(self_ptr self, protocol::thread_item item);

/// Completes the message the model was streaming, with its whole text when
/// given (an interrupt cuts it short: it ends with what arrived).
void complete_streamed(self_ptr self, std::string full_text = {},
                       std::string phase = "final_answer");
/// Completes the reasoning the model streamed (it is over once anything
/// else comes).
void complete_reasoning(self_ptr self);

/// A piece of a message or of reasoning: the first of an item starts it.
void on_model_delta(self_ptr self, model_delta& d);
/// Several pieces one read of the stream held, in order.
void on_model_deltas(self_ptr self, model_deltas& ds);
/// Tokens one request used, or a retry (which restarts the answer).
void on_model_notice(self_ptr self, model_notice& n);

/// A compaction of the thread's history: its item starts (once), and ends
/// once the compacted history is on its way to the store.
void begin_compaction(self_ptr self);

/// A review turn (turn_review.cpp): its enteredReviewMode item, git, then
/// the model's steps; at the end its exitedReviewMode and the review.
void start_review(self_ptr self);
void end_review(self_ptr self);
/// The model failed the turn: said, and the turn ends failed.
void model_failed(self_ptr self, const caf::error& err);
void end_compaction(self_ptr self, compaction_result result);

/// The model's context of this turn, to the conversation to store.
void store_context(self_ptr self, std::vector<nlohmann::json> items);

// -- the agent loop (turn.cpp) -----------------------------------------------

/// Asks the model for the next step.
void next_step(self_ptr self);
/// Asks the model now, with the tools the turn has.
void ask_model(self_ptr self);
/// A short message from the runtime itself (e.g. why a patch did not apply).
void say(self_ptr self, const std::vector<std::string>& deltas, const char* phase);
/// Ends the item in progress with `status`; the model sees `result`.
void complete_current(self_ptr self, protocol::item_status status, step_result result);
/// Reports the turn's end to its conversation (once; it does not quit).
void finish(self_ptr self, turn_result result);
/// Ends the turn (its result to the conversation) and quits.
void end_turn(self_ptr self, protocol::turn_status status);
/// What an approval's outcome does to the item in progress: `accepted` runs
/// only on an explicit accept; anything else ends the item.
void settle(self_ptr self, const approval_outcome& out, protocol::item_status on_error,
            const std::function<void()>& accepted);
/// An accepted command or file change: its grants, then it runs.
void run_accepted(self_ptr self, const protocol::approval_decision& d);
void apply_accepted(self_ptr self, const protocol::approval_decision& d);
/// Starts the command in progress (turn_exec.cpp) / writes the planned
/// changes, each once its start is stored.
void start_exec(self_ptr self);
void apply_changes(self_ptr self);
/// Writes the planned changes now (their start is stored).
void write_changes(self_ptr self);
/// Runs the turn's user shell command (thread/shellCommand): its item,
/// streamed like any command's, then the turn ends.
void run_user_shell(self_ptr self);
/// A chunk of the running command's output, streamed as a delta.
void on_output(self_ptr self, const std::string& chunk);
/// The command ended: its last output, then the item, then the next step.
void on_exited(self_ptr self, const exit_info& info);
/// Carries out the plan for the item in progress: `run` starts it now,
/// `refuse` ends it declined, `decide` hands it to an approval. `started`
/// announces the item (null when it was announced already).
void follow_plan(self_ptr self, approval_ask ask, approval_plan plan, notification_ptr started,
                 const std::function<void()>& run);
/// Hands the action in progress to an approval actor.
void ask_approval(self_ptr self, approval_ask ask, approval_plan plan,
                  notification_ptr item_started, bool restored);
void on_outcome(self_ptr self, uint64_t key, approval_outcome out);

// -- requests to a client (turn_requests.cpp) ---------------------------------

/// The model asks a client: the user a question (request_user_input ->
/// item/tool/requestUserInput), a tool the client declared (item/tool/call)
/// or for more permissions (item/permissions/requestApproval), each through
/// an approval actor; the answer, or why there is none, goes back to the
/// model.
void ask_client(self_ptr self, const model_step& step);
/// The outcome of the request in progress: the model is told; the turn goes
/// on, or ends interrupted when the request was cancelled.
void settle_request(self_ptr self, const approval_outcome& out);
/// Goes on with a request loaded after a restart: asked again (same call,
/// the deadline left) or its stored outcome handed to the model.
void resume_request(self_ptr self, const action_record& a);

// -- MCP tools (turn_mcp.cpp) --------------------------------------------------

/// Runs `then` once the turn has the MCP hub's current offer of tools in
/// its model context (at once when it has: the hub is asked only after its
/// offer changed; a hub that does not answer leaves the tools as they were).
void with_mcp_tools(self_ptr self, std::function<void()> then);
/// Whether the model's tool `name` is an MCP server's.
bool is_mcp_tool(self_ptr self, const std::string& name);
/// The model calls an MCP tool: its mcpToolCall item, its start stored,
/// then the call through the hub; the result or error goes to the model.
void call_mcp_tool(self_ptr self, const model_step& step, const std::string& call_id);
/// The turn is interrupted during a call: the item fails, the server is
/// told to cancel it.
void cancel_mcp_call(self_ptr self);
/// A server's progress on the call in progress: item/mcpToolCall/progress.
void on_mcp_progress(self_ptr self, const std::string& token, const std::string& params);
/// The outcome of the person asked whether the call may run: only an
/// explicit accept calls it (accepted for the session: later calls of the
/// tool in the thread run unasked); anything else fails the item as Codex
/// says it, or ends the turn interrupted when the ask was cancelled.
void settle_mcp_approval(self_ptr self, const approval_outcome& out);
/// Accepted "always": the hub writes the tool's approval_mode = "approve"
/// into config.toml; then the call (written or not).
void persist_mcp_approval(self_ptr self);
/// A call whose start was stored before a restart: failed, never again.
/// One asked of a person and not started: asked again, or its stored
/// decision applied once.
void resume_mcp_call(self_ptr self, const action_record& a);

// -- the store's view of actions (turn_durable.cpp) ---------------------------

/// The action in progress as the store keeps it (phase asked).
action_record action_of(const turn_state& st, const command_step& cmd, const std::string& digest);
action_record action_of(const turn_state& st, const patch_step& p, const std::string& patch,
                        const std::string& digest);
action_record action_of(const turn_state& st, const request_step& r, const std::string& digest);
action_record action_of(const turn_state& st, const mcp_step& m);

/// Stores that the request in progress is over (its outcome is with the
/// model: a restart does not hand it over again), then runs `then`.
void record_done(self_ptr self, std::function<void()> then);

/// Stores that the action in progress starts, then runs `start`. Never
/// twice: an action whose start is stored is never started again by a
/// restart. A start that cannot be stored does not start (the item fails).
void record_started(self_ptr self, std::function<void()> start);

/// Goes on with a turn loaded after a restart from its stored action: an
/// ask is asked again (with the deadline left), a decision is applied, a
/// start that may have happened ends the item failed.
void resume(self_ptr self, const action_record& a);

}  // namespace parley::turn_detail
