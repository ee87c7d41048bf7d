#pragma once
// Payloads that travel between parley's actors. All are local-only for now
// (whitelisted, not serialised); a remote deployment would give them inspect().

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/meta/type_name.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/core/approval_types.hpp"
#include "actors/core/command_sandbox.hpp"
#include "protocol/approvals.hpp"
#include "protocol/command_exec.hpp"
#include "protocol/methods.hpp"
#include "protocol/notifications.hpp"
#include "protocol/review.hpp"
#include "protocol/thread_extras.hpp"

namespace parley {

/// A notification on its way to clients, shared so fan-out never copies it.
/// When the runtime serves JSON clients, the actor that creates the event
/// also encodes its params, so that work is spread over the threads'
/// actors instead of piling up in the connection.
struct outgoing_event {
  protocol::notification body;
  std::string wire_params;  // `params` as JSON text; empty when not encoded ahead
  /// Backpressure (issue 22): the part of a model stream this event carries
  /// (a model_delta's credit). Released when the last client has taken the
  /// event into its outgoing queue, which lets the stream read on: so what
  /// is on its way between the network and the clients stays small.
  std::shared_ptr<const void> credit;
};
using notification_ptr = std::shared_ptr<const outgoing_event>;
/// Several events of one thread in one message, in their order: what a hop
/// had at hand at once (never waited for). Each stays its own notification.
using notification_batch = std::vector<notification_ptr>;

template <class T>
notification_ptr make_notification(T&& x, bool encode, std::shared_ptr<const void> credit = {}) {
  auto e = std::make_shared<outgoing_event>();
  e->credit = std::move(credit);
  e->body = std::forward<T>(x);
  if (encode) e->wire_params = protocol::dump_line(protocol::params_of(e->body));
  return e;
}

/// A request to a client that is no approval of an action but lives as one
/// (asked through the approval actor: first answer wins, deadline, cancel).
enum class client_request {
  none,          ///< an approval of a command or file change
  user_input,    ///< item/tool/requestUserInput: the model's questions
  dynamic_tool,  ///< item/tool/call: a tool the client declared
  permissions,   ///< item/permissions/requestApproval: more sandbox permissions
  elicitation,   ///< mcpServer/elicitation/request: an MCP server asks the user
  /// mcpServer/elicitation/request with `_meta.codex_approval_kind =
  /// "mcp_tool_call"`: may the model's call of an MCP tool run (stored, as
  /// a command's approval; only an accept runs it).
  mcp_approval,
};
const char* to_string(client_request x);

/// What a turn asks to have decided. `key` is unique in the runtime and
/// names the ask until it is answered or withdrawn. `digest` binds the
/// decision to exactly the action that was shown.
struct approval_ask {
  uint64_t key = 0;
  std::string thread_id;
  std::string tenant;  // the thread's (issue 22), for the audit log
  hooks::action_kind what = hooks::action_kind::command;
  protocol::command_approval_params command;  // what == command: the v2 request params
  protocol::file_change_approval_params file;  // what == file_change: the v2 request params
  std::vector<protocol::file_update_change> changes;  // file_change: what the item shows
  std::string raw_command;  // command: the line /bin/sh -c runs
  std::string cwd;
  std::string digest;  // "sha256:<hex>" of the command + cwd, or of the changes
  /// A request that is no approval: its kind, the v2 params the client is
  /// sent, and the turn and item (or call) it belongs to.
  client_request request = client_request::none;
  nlohmann::json request_params;
  std::string request_turn;
  std::string request_item;

  bool is_file_change() const { return what == hooks::action_kind::file_change; }
  bool is_client_request() const { return request != client_request::none; }
  const std::string& turn_id() const {
    if (is_client_request()) return request_turn;
    return is_file_change() ? file.turn_id : command.turn_id;
  }
  const std::string& item_id() const {
    if (is_client_request()) return request_item;
    return is_file_change() ? file.item_id : command.item_id;
  }
};

/// Which approval a conversation hears about: its key, and the turn and item
/// it decides for.
struct approval_ref {
  uint64_t key = 0;
  std::string turn_id;
  std::string item_id;
  /// What the thread's status says while it waits: waitingOnApproval, or
  /// waitingOnUserInput for a question (a client tool's call sets neither).
  client_request request = client_request::none;
};

/// An MCP tool whose calls were accepted for the rest of the session (an
/// approval answered with `_meta.persist = "session"`).
struct mcp_tool_grant {
  std::string server;
  std::string tool;
};

/// Files accepted for the rest of the session ("acceptForSession" on a patch).
struct path_grant {
  std::vector<std::string> paths;
};

/// How an approval ended, as the turn sees it. Only `decided` with a decision
/// that allows_run() lets the action run.
struct approval_outcome {
  enum class kind { decided, client_error, malformed, timed_out, transport_closed, cancelled };
  kind how = kind::cancelled;
  protocol::approval_decision decision;
  std::string detail;
  /// Which pipeline stage decided: "rules", "grants", "hook:<name>",
  /// "client", "deadline", "interrupt".
  std::string stage = "client";
};
const char* to_string(approval_outcome::kind x);

/// How a turn ended, reported to its conversation just before it quits.
struct turn_result {
  protocol::turn_status status = protocol::turn_status::completed;
  std::optional<protocol::turn_error> error;
  /// The thread's tokens after the turn, when its model reported usage.
  std::optional<protocol::token_breakdown> tokens;
  /// The tokens of the thread's last model request (its context's size, as
  /// the provider counted it), when the turn's model reported one; 0 after
  /// a compaction. What decides the next automatic compaction.
  std::optional<int64_t> last_request_tokens;
};

/// A finished subprocess.
struct exit_info {
  int exit_code = -1;       // the code, or 128 + signal number
  int64_t duration_ms = 0;
  int64_t pid = 0;
  /// Why it never started (cannot start, killed or shut down while its
  /// start was queued); empty = it ran. Then pid is 0 and nothing ran.
  std::string not_started;
  /// A limit of parley's ended it (e.g. "timed out after 10000 ms"); empty:
  /// it ended on its own or was interrupted.
  std::string ended_by;
};

/// How a step ended, as the model is told (each provider words it its own
/// way: an HTTP model as Codex does).
struct step_result {
  enum class kind {
    said,             // a message was shown
    ran,              // the command ran: exit_code, duration_ms, output
    failed_to_start,  // the command never ran: detail
    declined,         // by the client (detail empty) or by policy, rules, a hook (detail)
    timed_out,        // nobody decided before the approval's deadline
    approval_failed,  // the client answered with an error or nonsense: detail
    cancelled,        // the approval was cancelled (the turn ends)
    interrupted,      // the turn was interrupted: output so far
    patch_applied,    // files: 'A', 'M' or 'D' and the path
    patch_failed,     // detail
    refused,          // tools are not allowed in this turn
    lost,             // the server stopped while it ran; it is never run again
    answered,         // a client answered the model's request: output (JSON text), success
    not_answered,     // nobody answered it (timeout, error, malformed answer): detail
  };
  kind what = kind::said;
  int exit_code = 0;
  int64_t duration_ms = 0;
  std::string output;
  std::string detail;
  std::vector<std::pair<char, std::string>> files;
  /// answered: whether the client's tool says it succeeded; its content
  /// items as the Responses API takes a call's output (input_text /
  /// input_image), when the answer was a client tool's.
  bool success = true;
  nlohmann::json content_items;
};

/// Context the model gets for its next step: the thread so far, the user's
/// text and what the previous steps of this turn produced.
struct model_context {
  std::string user_text;
  /// What the user steered into the turn since it started (turn/steer), in
  /// order: the model sees each at its first request after it arrived,
  /// after the results of the steps before it.
  std::vector<std::string> steered;
  std::vector<step_result> step_results;  // one entry per finished step
  /// Whose turn it is: a model that sends the whole thread to a stateless
  /// endpoint reads the earlier turns from the store.
  std::string thread_id;
  std::string turn_id;
  /// The turn goes on after a restart: its model context so far is in the
  /// store (this turn's included), and `resumed_call` (a call id) is the
  /// call whose result the next step brings.
  bool resumed = false;
  std::string resumed_call;
  /// Function tools offered besides the model's own (the tools the thread's
  /// client declared), in the Responses shape {type: "function", name,
  /// description, parameters}; `name` is what the model calls.
  std::vector<nlohmann::json> offered_tools;
  /// A compaction turn (thread/compact/start): no step is asked, only a
  /// summary of `history` (the thread's model context, from the store).
  bool compact = false;
  std::vector<nlohmann::json> history;
  /// The size in tokens of the thread's last model request before this
  /// turn (0: unknown); a model past its automatic compaction limit
  /// compacts before its next request.
  int64_t last_request_tokens = 0;
  /// A review turn (review/start) when set: the reviewer's instructions.
  /// The model starts afresh from them and `user_text` (the review's
  /// prompt), not from the thread's history, and what it does in the
  /// review stays out of the thread's context.
  std::string review_instructions;
  /// A review: the directives the scripted model follows (a custom
  /// target's instructions) and the files git says changed.
  std::string review_script;
  std::vector<std::string> review_files;
};

/// A thread's history compacted: the model's summary, and the model
/// context that replaces everything before it (Codex's `compacted` rollout
/// line: the summary message and the replacement history).
struct compaction_result {
  std::string summary;
  std::string message;  // the summary as the model is given it (replacement's last item)
  std::vector<nlohmann::json> replacement;
};

/// One step of a turn, as decided by the model.
struct model_step {
  /// ask_user: request_user_input (arguments: {"questions": [...]});
  /// call_tool: a tool the client declared (tool, tool_namespace,
  /// arguments); request_permissions: more sandbox permissions
  /// (arguments: {"permissions": {...}, "reason"?}).
  enum class kind { say, run, patch, done, ask_user, call_tool, request_permissions };
  kind what = kind::done;
  std::vector<std::string> deltas;  // say: the message in pieces (whole when streamed)
  std::string command;              // run: a shell command for /bin/sh -c
  std::string patch;                // patch: apply_patch text (*** Begin Patch ... *** End Patch)
  /// say: the message was streamed already, as model_delta messages under
  /// this item id; the step completes it.
  std::string streamed_item;
  /// run: where to run it (empty: the thread's cwd; relative: below it).
  std::string workdir;
  /// run: the model asks to run it outside the thread's sandbox (Codex's
  /// sandbox_permissions "require_escalated"), saying why.
  bool escalate = false;
  std::string justification;
  /// run: the call's timeout_ms; 0 = none given (the configured default).
  int64_t timeout_ms = 0;
  /// run, patch: the model's call id (the item's id, as Codex does); empty:
  /// the turn makes one.
  std::string call_id;
  /// say: "commentary" (more work follows) or "final_answer" (empty).
  std::string phase;
  /// ask_user, call_tool, request_permissions: the call's arguments as the
  /// model gave them (checked by the turn); call_tool: which tool.
  nlohmann::json arguments;
  std::string tool;
  std::optional<std::string> tool_namespace;
  /// A model that keeps its context verbatim (the HTTP provider): the
  /// Responses API items it produced or sent since its previous step (output
  /// items as the endpoint sent them, tool outputs as it answered them), to
  /// be stored as the turn's context. Absent: the thread's items stand for
  /// the model's context (the scripted model).
  std::optional<std::vector<nlohmann::json>> context;
  /// A compaction turn's answer (kind done): the compacted history.
  std::optional<compaction_result> compacted;
};

/// A piece of the model's answer, sent to its turn while the model is still
/// speaking (before the step that completes the message).
struct model_delta {
  enum class kind { text, reasoning_summary, reasoning_text };
  std::string item_id;
  std::string text;
  kind what = kind::text;
  int64_t index = 0;  // reasoning: the summary or content part
  /// What of the model's stream this piece holds (see outgoing_event::credit);
  /// the turn hands it to the event it emits. Null: nothing to give back.
  std::shared_ptr<const void> credit;
};
/// The pieces one read of the model's stream held, in order, in one message.
using model_deltas = std::vector<model_delta>;

/// What the model said on the side: tokens it used for one request, or a
/// failure it is retrying (Codex's `error` with willRetry).
struct model_notice {
  std::optional<protocol::token_breakdown> usage;
  std::string retrying;  // why, when it retries
  /// The answer starts over (a retry): what streamed so far is replaced by
  /// what the next attempt streams, under the same item.
  bool restart = false;
  /// Context no step will carry (the model is failing the turn): stored
  /// like a step's.
  std::vector<nlohmann::json> context;
  /// The model compacts the thread's history before its next request (it
  /// passed its automatic compaction limit): `compacting` when it starts,
  /// then `compacted` with the result (or a failure of the step).
  bool compacting = false;
  std::optional<compaction_result> compacted;
};

/// One item of a thread's model context and the turn it belongs to (empty:
/// before any turn, as Codex's session-level messages may be).
struct context_item {
  std::string turn_id;
  nlohmann::json item;
  /// Put into the history by a client (thread/inject_items) after turn
  /// `turn_id` (empty: before every turn), not written by that turn: it
  /// follows the turn's items instead of standing for them.
  bool injected = false;
};

/// Durable records of a thread's history (the store's unit of append).
struct thread_created_record {
  protocol::thread meta;
  std::vector<context_item> context;  // a fork's copied context (meta.turns')
};
struct turn_started_record {
  std::string turn_id;
  int64_t started_at = 0;
};
struct item_record {
  std::string turn_id;
  protocol::thread_item item;
  /// Whether the item also stands for the model's context (the response
  /// items derived from it are stored with it); false when the turn's model
  /// keeps its own context (context_record).
  bool derive_context = true;
};
/// Responses API items the model saw or produced in a turn, verbatim.
struct context_record {
  std::string turn_id;
  std::vector<nlohmann::json> items;
};
/// The thread's model context so far replaced by a compacted one (in turn
/// `turn_id`); what the model sees afterwards starts from `replacement`.
struct compacted_record {
  std::string turn_id;
  std::string message;  // the summary as the model is given it
  std::vector<nlohmann::json> replacement;
};
struct turn_completed_record {
  protocol::turn turn;  // status, error, timestamps; items are stored separately
};
struct thread_renamed_record {
  std::optional<std::string> name;
};
/// thread/goal/set and thread/goal/clear: the thread's goal now (none:
/// cleared). Written as Codex writes a goal's update (thread_goal_updated).
struct goal_record {
  std::optional<protocol::thread_goal> goal;
};

/// thread/metadata/update: the thread's Git metadata now (none: cleared).
struct git_info_record {
  std::optional<protocol::git_info> git;
};
/// thread/inject_items: Responses API items for the model's history, after
/// everything so far (the running turn's items included).
struct injected_record {
  std::vector<nlohmann::json> items;
};

/// An action of a turn (a command or a file change) on its way to running,
/// or a request of its model's to a client (a question, a client tool's
/// call), as the store keeps it: a restart knows from it where the action
/// stood. Every phase is stored before what it names happens (asked before
/// any client is asked, decided before the action runs or the model hears
/// the answer, started before it starts), and each record carries the whole
/// action, so the last one of an item alone restores it. The item's
/// item_record ends it; a request, which may have no item, ends with `done`
/// (its outcome is with the model: nothing of it is pending any more).
struct action_record {
  enum class phase { asked, decided, started, done };
  phase at = phase::asked;
  std::string turn_id;
  std::string item_id;
  bool file_change = false;
  std::string command;  // command: the line /bin/sh -c runs
  std::string cwd;      // command: where it runs
  std::string patch;    // file change: the apply_patch text
  std::string digest;   // what the approval is bound to
  /// command: it asked to leave the sandbox (runs outside only if accepted).
  bool escalated = false;
  std::string justification;
  int64_t timeout_ms = 0;  // command: the call's timeout_ms (0: the default)
  int64_t item_started_ms = 0;
  /// How many steps of the turn had finished before this one (where the
  /// model goes on from).
  int64_t step = 0;
  // The turn's settings, to go on with it after a restart.
  std::string thread_cwd;
  nlohmann::json policy;  // the approval policy, as the wire encodes it
  std::vector<std::string> writable_roots;
  nlohmann::json sandbox;  // the thread's sandbox policy, as the wire encodes it
  /// asked: when the client stage gives up (unix ms; survives restarts).
  int64_t deadline_ms = 0;
  // decided: how the approval ended (approval_outcome), and who decided.
  std::string outcome;
  nlohmann::json decision;
  std::string stage;
  std::string detail;
  std::string decided_by;
  /// A request to a client: "userInput" (item/tool/requestUserInput) or
  /// "dynamicToolCall" (item/tool/call); empty for a command or a file
  /// change. Its params as sent: after a restart the same call is asked
  /// again (same ids), or its stored answer is handed to the model.
  std::string request;
  nlohmann::json request_params;
  /// decided: the request's answer, as checked (approval_decision::answer).
  nlohmann::json answer;
};
const char* to_string(action_record::phase x);

using store_record
    = std::variant<thread_created_record, turn_started_record, item_record, context_record,
                   turn_completed_record, thread_renamed_record, action_record,
                   compacted_record, goal_record, git_info_record, injected_record>;

/// thread/goal/get, /set and /clear, as the thread manager takes them.
struct goal_request {
  enum class kind { get, set, clear };
  kind what = kind::get;
  protocol::thread_goal_set_params params;  // threadId always; the rest for set
};
/// The goal afterwards (get, set), and whether one was cleared (clear).
struct goal_answer {
  std::optional<protocol::thread_goal> goal;
  bool cleared = false;
};

/// thread/metadata/update, thread/revert and thread/inject_items, as the
/// thread manager and a loaded thread take them.
struct thread_edit {
  enum class kind { metadata, revert, inject };
  kind what = kind::metadata;
  std::string thread_id;
  protocol::git_info_patch git;      // metadata (checked and trimmed)
  std::string before_turn_id;        // revert
  std::vector<nlohmann::json> items; // inject (checked)
};
/// The thread afterwards (metadata, revert; turns empty), and for a revert
/// where paging back through what it kept starts (its last turn, its last
/// item; none when nothing is kept).
struct thread_edit_answer {
  protocol::thread thread;
  std::optional<std::string> turns_cursor;
  std::optional<std::string> items_cursor;
};

/// A thread as the store holds it.
struct stored_thread {
  protocol::thread meta;  // turns filled in; meta.path is the rollout
  bool archived = false;
  /// What the model has seen of the thread, in order: the response items
  /// written with its items and its models' verbatim context.
  std::vector<context_item> context;
  /// The turns the last compaction replaced (the one it ran in included):
  /// their context before it is gone, and their items no longer stand for
  /// any (store::model_history).
  std::vector<std::string> compacted_turns;
  /// The action of the last turn that had not ended when the thread was last
  /// written (asked, decided or started, its item not completed).
  std::optional<action_record> pending;
  /// The thread's goal (thread/goal/*), as last stored.
  std::optional<protocol::thread_goal> goal;
};

/// A thread whose last turn has an action pending, as the store lists it
/// for a restart (the thread need not be read).
struct pending_thread {
  std::string thread_id;
  action_record::phase at = action_record::phase::asked;
  int64_t deadline_ms = 0;
};

/// A turn loaded again to go on from its pending action (after a restart).
struct resumed_turn {
  std::string turn_id;
  int64_t started_at = 0;  // unix seconds
  std::string user_text;
  /// The messages steered into it before the server stopped (in order).
  std::vector<std::string> steered;
  action_record action;
};

/// An explicit rollout path from a client (validated before any read).
struct rollout_path {
  std::string path;
};

/// Live counts of runtime objects, for leak checks and `parley/debug/counts`.
struct runtime_counts {
  int64_t conversations = 0;
  int64_t turns = 0;
  int64_t approvals = 0;
  int64_t execs = 0;
  int64_t pending_asks = 0;     // asks held by conversations
  int64_t pending_requests = 0; // server->client requests held by connections
  int64_t processes = 0;        // subprocesses not yet reaped
};

/// One node of a cluster as the shared store sees it (store_actor's
/// atom::members). Single-node stores report none.
struct cluster_member {
  std::string name;
  /// Where its middleman listens ("host:port").
  std::string address;
  /// Bumped each time the node (re)joins: leases of an older incarnation
  /// are void.
  uint64_t incarnation = 0;
  /// Its node lease has not expired (by the database's clock).
  bool alive = false;
  /// Milliseconds left on its node lease (negative: expired that long ago).
  int64_t lease_ms_left = 0;
  /// Threads whose lease it holds.
  uint64_t threads = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_member& x) {
  return f(caf::meta::type_name("cluster_member"), x.name, x.address, x.incarnation, x.alive,
           x.lease_ms_left, x.threads);
}

/// The cluster as the shared store sees it, and whether this node's own
/// lease still holds (false: it was fenced and must step down and rejoin).
struct cluster_view {
  std::vector<cluster_member> members;
  bool self_alive = true;
  uint64_t self_incarnation = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_view& x) {
  return f(caf::meta::type_name("cluster_view"), x.members, x.self_alive, x.self_incarnation);
}

/// A thread whose lease a dead node held: taken over by a survivor (those
/// with an action pending at once, the others when a client touches them).
struct orphan_thread {
  std::string id;
  bool pending = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, orphan_thread& x) {
  return f(caf::meta::type_name("orphan_thread"), x.id, x.pending);
}

}  // namespace parley

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::notification_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::notification_batch)
// A model stream's credit (outgoing_event::credit) on its way to a writer.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const void>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::approval_ask)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::approval_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::approval_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::path_grant)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::mcp_tool_grant)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::sandbox_grant)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::hooks::verdict)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::turn_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::exit_info)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::model_context)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::model_step)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::model_delta)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::model_deltas)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::model_notice)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::store_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::context_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::compacted_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::action_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::resumed_turn)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<parley::pending_thread>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::stored_thread)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::goal_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::goal_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::thread_edit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::thread_edit_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::rollout_path)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::review_start_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::review_start_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_list_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_list_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_resume_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_fork_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_id_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_name_set_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_unsubscribe_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::runtime_counts)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::approval_decision)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_start_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_session_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_read_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_read_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_loaded_list_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_loaded_list_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::turn_start_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::turn_start_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::turn_interrupt_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::thread_shell_command_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::command_exec_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::command_exec_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::terminal_size)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::turn_steer_params)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::turn_steer_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::protocol::user_message_item)
