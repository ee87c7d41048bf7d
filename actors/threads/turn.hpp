#pragma once
// One turn: the agent loop. It asks the model for a step, then says, runs a
// command or changes files, asking for approval per policy, and reports
// every item event to its conversation, which orders, stores and fans them
// out. An action that needs a decision is planned here, once, and decided by
// its approval actor. An exit signal (turn/interrupt) resolves what is
// pending: it is passed on to the approval, whose outcome ends the item, or
// the command's process group is killed; the turn ends `interrupted`.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/approval/policy.hpp"
#include "actors/core/command_sandbox.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/patch/apply_patch.hpp"
#include "actors/patch/turn_diff.hpp"
#include "actors/threads/output_buffer.hpp"
#include "actors/threads/replay_cursor.hpp"
#include "protocol/delta_text.hpp"

namespace parley {

/// The user's own command (thread/shellCommand): a turn that runs only it.
struct user_shell_command {
  std::string command;  // what /bin/sh -c runs
  int64_t timeout_ms = 0;  // resolved already (> 0), bounded by the limits
};

/// The settings a turn runs with (a snapshot of its conversation's).
struct turn_settings {
  std::string thread_id;
  /// The thread's tenant (issue 22): named by its approvals' audit lines.
  std::string tenant;
  std::string turn_id;
  std::string cwd;
  protocol::approval_policy policy;
  /// Where patches may write (absolute); empty = cwd only.
  std::vector<std::string> writable_roots;
  /// Where its commands run: confined to this sandbox.
  protocol::sandbox_policy sandbox;
  /// What clients granted beyond `sandbox` (item/permissions/requestApproval):
  /// the thread's session grants, and this turn's once granted. Its
  /// confined commands run with it; its write paths are in writable_roots.
  sandbox_grant granted;
  /// This host cannot confine commands and the operator accepted running
  /// them unconfined: every approval says so.
  bool commands_unconfined = false;
  session_grants grants;
  std::string user_text;
  /// Input steered into it that its model saw already (a restored turn).
  std::vector<std::string> steered;
  /// Tokens the thread's models used before this turn.
  protocol::token_breakdown tokens_before;
  /// The size of the thread's last model request (tokens; 0: unknown).
  int64_t last_request_tokens = 0;
  /// A compaction turn (thread/compact/start): it asks the model for a
  /// summary of the thread's history, stores the compacted history, and
  /// completes; no step is asked.
  bool compact = false;
  /// A review turn (review/start): it reads its target with git, asks the
  /// model to review it, and ends with the review.
  std::optional<protocol::review_target> review;
  /// false for a structured turn (turn/start with an outputSchema, e.g. the
  /// TUI's title generation): it never runs a tool or asks for approval.
  bool tools_allowed = true;
  /// A turn loaded again after a restart (or an unload): it goes on from
  /// this action as the store last recorded it, not from a new step.
  std::optional<action_record> resume;
  /// Set: the turn runs this one command of the user's, confined to the
  /// thread's sandbox, asks no model and no person, then completes.
  std::optional<user_shell_command> shell;
  /// The tools the thread's client declared (thread/start dynamicTools):
  /// offered to the model, called with item/tool/call.
  std::vector<protocol::dynamic_tool> dynamic_tools;
};

/// The command item in progress.
struct command_step {
  protocol::command_execution_item item;
  std::string raw;  // what /bin/sh -c runs
  bool escalated = false;  // asked to run outside the sandbox (runs so only if accepted)
  /// An approval accepted it (a person, a grant or a rule): it runs as
  /// approved, outside the sandbox, as Codex runs every approved command.
  bool approved = false;
  std::string justification;
  int64_t timeout_ms = 0;  // the call's; 0: the configured default
  int64_t started_ms = 0;
  std::optional<output_buffer> output;  // set while it runs
  caf::actor_addr exec_addr;
};

/// The file change item in progress: the planned changes wait for approval.
struct patch_step {
  protocol::file_change_item item;
  std::vector<patch::file_change> planned;
  int64_t started_ms = 0;
};

/// A request of the model's to a client in progress (a question, a client
/// tool's call, a permission request): asked through an approval actor.
struct request_step {
  client_request what = client_request::user_input;
  std::string call_id;
  int64_t started_ms = 0;
  /// The request's params as sent (the questions an answer may name, the
  /// permissions asked, which bound what may be granted).
  nlohmann::json params;
  /// dynamic_tool: the item that shows the call.
  std::optional<protocol::dynamic_tool_call_item> item;
};

/// An MCP tool offered to the model (from the hub's offer), by the name the
/// model calls it.
struct mcp_offered_tool {
  std::string server;
  std::string tool;
  int64_t deadline_ms = 0;  // how long the turn waits for the hub's answer
  /// What decides whether a call asks a person first, and what the
  /// question shows (protocol/mcp_tool_approval.hpp): the tool's
  /// annotations as listed (null: none), its approval_mode, title and
  /// description.
  nlohmann::json annotations;
  std::string approval_mode = "auto";
  std::string title;
  std::string description;
};

/// A call of an MCP tool in progress (issue 30): its item, and the
/// progressToken its server reports progress under.
struct mcp_step {
  protocol::mcp_tool_call_item item;
  int64_t started_ms = 0;
  /// When the model's call reached the turn: the model is told the call's
  /// wall time from here (an approval's wait included, as Codex counts it).
  std::chrono::steady_clock::time_point began;
  std::string token;
  int64_t deadline_ms = 0;
  /// The tool's approval_mode ("auto", "prompt", "approve") and, when a
  /// person was asked, the question's params (stored with the call).
  std::string approval_mode = "auto";
  nlohmann::json approval;
  /// The server answered; its image is being made ready for the model
  /// off the turn's actor (turn_mcp.cpp).
  bool preparing = false;
};

/// An agent message the model is streaming: started, not yet completed.
struct streaming_message {
  protocol::agent_message_item item;
  std::string model_id;     // the model's id for it (a retry may change it)
  bool restarting = false;  // a retry began: the next message replaces it
  replay_cursor shown;      // what of item.text the client was sent
  /// Its deltas' params, the ids escaped once for all of them.
  protocol::message_delta_text delta_text;
};

/// Reasoning the model is streaming, beside its item: the model's id for it
/// and, per part, what the client was sent (a retry streams it again).
struct streaming_reasoning {
  std::string model_id;
  bool restarting = false;
  std::vector<replay_cursor> summary_shown;
  std::vector<replay_cursor> content_shown;
};

struct turn_state {
  static inline const char* name = "turn";
  counted live;  // the runtime's turns
  runtime_services svc;
  conversation_actor conversation;
  /// While the turn takes several model pieces at once: the events they
  /// make, sent on to the conversation as one message when all are taken.
  notification_batch* gathering = nullptr;
  turn_settings settings;
  model_actor model;  // the shared one, or this turn's own
  model_context context;
  std::optional<streaming_message> streaming;
  std::optional<protocol::reasoning_item> reasoning;  // streaming, not yet completed
  streaming_reasoning reasoning_stream;               // while `reasoning` is set
  /// Reasoning items completed while the model answers the step asked
  /// (each shown whole already). A retried attempt streams the response
  /// again from its start: that many of its reasoning items are not shown
  /// again (reasoning_to_skip; the one being skipped, by the model's id).
  size_t reasoning_done_in_step = 0;
  size_t reasoning_to_skip = 0;
  std::string skipping_reasoning_id;
  protocol::token_breakdown tokens;  // the thread's, this turn's included
  /// The size of the last request the model reported (tokens).
  std::optional<int64_t> last_request_tokens;
  /// The contextCompaction item in progress (started, not completed).
  std::optional<protocol::context_compaction_item> compaction;
  /// A review turn: the reviewer's last message (it is not shown as the
  /// model says it, but as the review when the turn ends).
  std::string review_answer;
  std::optional<command_step> command;
  std::optional<patch_step> patch;
  std::optional<request_step> request;
  std::optional<mcp_step> mcp;
  /// The MCP tools offered to the model, by the name it calls them, as of
  /// the hub's offer `mcp_generation` (0: none asked for yet).
  std::map<std::string, mcp_offered_tool> mcp_tools;
  uint64_t mcp_generation = 0;
  /// The client's tools (offered first); context.offered_tools is these and
  /// then the MCP tools' functions.
  std::vector<nlohmann::json> client_tools;
  std::optional<uint64_t> pending_ask;
  /// Input the user steered in (turn/steer) that the model has not seen:
  /// shown and handed over at its next request.
  std::vector<protocol::user_message_item> steered;
  caf::actor_addr approval_addr;  // the latest approval (pending or done)
  /// Set when an exit signal arrived while an approval was pending: the
  /// turn ends with it once the approval has settled.
  std::optional<caf::error> interrupting;
  patch::turn_diff diff;  // every change this turn applied
  bool finished = false;
  /// The action in progress as the store keeps it (each phase is a copy
  /// with its own `at`).
  action_record action;
};

turn_actor::behavior_type turn(turn_actor::stateful_pointer<turn_state> self,
                                       conversation_actor conversation, runtime_services svc,
                                       turn_settings settings);

}  // namespace parley
