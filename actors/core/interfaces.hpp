#pragma once
// Every interface between parley's components, in one place (Tenzir's
// layout). The actor tree and the flows between these interfaces are
// described in README.md. A component's private actors (the local store's
// I/O actors, a hook program's runner, the stdio line writer, the
// connection) are declared beside their component: nobody else talks to them.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <string>
#include <vector>

#include "actors/core/node_interface.hpp"
#include "actors/core/atoms.hpp"
#include "actors/core/errors.hpp"
#include "actors/core/messages.hpp"
#include "actors/core/node_interface.hpp"

// The audit log's record is defined by the pure audit library, which knows no
// actors: only its senders and its writer, which include audit_log.hpp, need
// the whole type. Here it is a message type of audit_actor.
namespace parley::audit {
struct record;  // actors/approval/audit/audit_log.hpp
}

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::audit::record)

namespace parley {

/// A client of the runtime: a connection that receives a thread's events and
/// answers its approvals. The stdio JSON-RPC connection and the in-process
/// connection both implement it.
using client_actor = caf::typed_actor<
    // A notification for this client.
    caf::reacts_to<atom::event, notification_ptr>,
    // Several, in order (each its own notification, as if sent one by one).
    caf::reacts_to<atom::event, notification_batch>,
    // Ask the client to decide; the reply comes when the client answers, or an
    // error (client_error, malformed_reply, transport_closed, withdrawn).
    caf::replies_to<atom::ask, approval_ask>::with<protocol::approval_decision>,
    // The ask is void (timeout, interrupt): resolve it without a decision.
    caf::reacts_to<atom::withdraw, uint64_t>>;

/// The clients a thread's approval may ask (its subscribers, in order).
using client_list = std::vector<client_actor>;

/// The durable history of threads.
using store_actor = caf::typed_actor<
    // Append one record to a thread; ok once it is stored.
    caf::replies_to<atom::append, std::string, store_record>::with<atom::ok>,
    // A thread's metadata and turns, by id ("no rollout found for thread id").
    caf::replies_to<atom::load, std::string>::with<stored_thread>,
    // The same from an explicit rollout path (validated before any read).
    caf::replies_to<atom::load, rollout_path>::with<stored_thread>,
    // Whose a thread is, as stored ("": stored before tenants, the default
    // tenant's), without reading its history ("no rollout found for thread
    // id" when there is none): what a client's tenant check asks.
    caf::replies_to<atom::tenant, std::string>::with<std::string>,
    // thread/list over every stored thread (status notLoaded).
    caf::replies_to<atom::list, protocol::thread_list_params>::with<protocol::thread_list_response>,
    // Archive (true) or unarchive (false) a thread; its metadata afterwards.
    caf::replies_to<atom::archive, std::string, bool>::with<stored_thread>,
    // Delete a thread: its rollout, then its index entry; ok once both are
    // gone ("no rollout found for thread id" when there is none).
    caf::replies_to<atom::erase, std::string>::with<atom::ok>,
    // thread/revert: the thread keeps its turns before the one named (and
    // its name, goal and Git metadata); the thread afterwards. Written whole
    // before it replaces the old history, so a crash leaves one or the other.
    caf::replies_to<atom::revert, std::string, std::string>::with<stored_thread>,
    // The threads whose last turn has an action pending (asked, decided,
    // started), without reading them: what a restart goes on with.
    caf::replies_to<atom::pending>::with<std::vector<pending_thread>>,
    // The server is going away (a signal, not a client): every append
    // accepted so far is written and synced, later ones are refused, so
    // what was pending stays pending on disk. ok once flushed.
    caf::replies_to<atom::seal>::with<atom::ok>,
    // -- a cluster's shared store (PostgreSQL); single-node stores answer as
    // the only node: every lease theirs (epoch 0), no members, no orphans --
    // Take or confirm this node's lease of a thread before loading it: its
    // epoch (the fencing token every later write of the thread carries), or
    // errc::not_owner ("thread T is owned by node N") while another live
    // node holds it. A dead holder's lease is taken over (epoch + 1).
    caf::replies_to<atom::lease, std::string>::with<uint64_t>,
    // The thread unloaded here: its lease is let go (the epoch stays, so a
    // write of the old holder is still refused).
    caf::reacts_to<atom::release, std::string>,
    // The live node holding a thread's lease ("" when none does).
    caf::replies_to<atom::owner, std::string>::with<std::string>,
    // Every node the store knows, and whether this node's lease holds.
    caf::replies_to<atom::members>::with<cluster_view>,
    // The threads a node whose lease expired held (empty while it lives).
    caf::replies_to<atom::orphans, std::string>::with<std::vector<orphan_thread>>,
    // This node was fenced (its lease expired) and has let every thread go:
    // it joins again with a new incarnation (returned).
    caf::replies_to<atom::rejoin>::with<uint64_t>>;

/// Where a turn's next step comes from.
using model_actor = caf::typed_actor<
    caf::replies_to<atom::step, model_context>::with<model_step>,
    // Backpressure (issue 22): a client of the turn's thread is behind (true)
    // or has caught up (false). A streaming model stops reading its stream
    // meanwhile; one that does not stream ignores it.
    caf::reacts_to<atom::pressure, bool>>;

/// One pending approval, the one owner of its decision: it announces the
/// item and the waiting status, runs its plan (rules, session grants, hooks,
/// client), withdraws the client's prompt when it must, and reports exactly
/// one outcome. An exit signal (the turn interrupted) settles it cancelled.
using approval_actor = caf::typed_actor<
    // Start deciding; the reply is the outcome (sent once).
    caf::replies_to<atom::decide>::with<approval_outcome>,
    // A client subscribed to the thread while this approval waits: it is
    // asked too (a reconnect gets its pending approvals again).
    caf::reacts_to<atom::ask, client_actor>,
    // An async in-process hook's answer (the stage's token).
    caf::reacts_to<atom::hook_reply, uint64_t, hooks::verdict>,
    // A stage's deadline passed (the stage's token). Token 0 before it
    // started: its asker never started it; it quits.
    caf::reacts_to<atom::deadline, uint64_t>>;

/// Receives what a running subprocess produces: its output in chunks, then
/// exactly one exit. The process reactor sends it to an exec actor (or a hook
/// runner), and the exec relays it to its turn; to the outside a turn is
/// nothing more (it is started by its conversation and stopped by an exit
/// signal), so exec and turn share this one interface.
using process_sink_actor = caf::typed_actor<caf::reacts_to<atom::output, std::string>,
                                            caf::reacts_to<atom::exited, exit_info>>;

/// A turn: a process sink (its command's exec relays to it) that also hears
/// its model speak while a step is under way: pieces of a message as they
/// stream, the tokens each request used, and retries; and the user's input
/// steered into it (turn/steer), shown and given to the model at its next
/// request (ok: taken; an error once the turn is ending).
using turn_actor
    = process_sink_actor::extend<caf::reacts_to<atom::delta, model_delta>,
                                 // Several pieces one read of the stream held, in order.
                                 caf::reacts_to<atom::delta, model_deltas>,
                                 caf::reacts_to<atom::notice, model_notice>,
                                 caf::replies_to<atom::steer, protocol::user_message_item>::with<atom::ok>,
                                 // A client of its thread is behind (true) or
                                 // caught up (false): passed to its model.
                                 caf::reacts_to<atom::pressure, bool>,
                                 // An MCP server's progress on the turn's call
                                 // (its progressToken, the notification's params
                                 // as JSON text), through the MCP hub.
                                 caf::reacts_to<atom::mcp_progress, std::string, std::string>>;

/// The audit log's writer: appends what the approval actors report.
// Appends one line; ok once it is written (an error when it was not).
using audit_actor
    = caf::typed_actor<caf::replies_to<atom::append, audit::record>::with<atom::ok>>;

/// The rule book's keeper: writes the amendments a client accepted
/// (acceptWithExecpolicyAmendment) to the rules directory.
/// A tenant's amendment holds for its threads alone (the default tenant's for all).
using rules_actor
    = caf::typed_actor<caf::reacts_to<atom::amend, std::vector<std::string>, std::string>>;

/// One loaded thread.
using conversation_actor = caf::typed_actor<
    // -- from connections (through the thread manager) --
    // Subscribe a client and describe the thread (thread/start).
    caf::replies_to<atom::open, client_actor>::with<protocol::thread_session_response>,
    // Start a turn, or return the active one.
    caf::replies_to<atom::turn_start, protocol::turn_start_params,
                    client_actor>::with<protocol::turn_start_response>,
    // Subscribe a client to a loaded thread (thread/resume): its turns from
    // the store unless excluded, no thread/started.
    caf::replies_to<atom::resume, client_actor,
                    protocol::thread_resume_params>::with<protocol::thread_session_response>,
    // The same for a thread just loaded with a turn to go on with: the
    // client is subscribed in the same step as the turn restarts, so it
    // sees every event of it (one message: a restore sent before the
    // resume could run its turn's first events before the resume arrived).
    caf::replies_to<atom::resume, client_actor, protocol::thread_resume_params,
                    resumed_turn>::with<protocol::thread_session_response>,
    // Stop sending this client the thread's events: "unsubscribed" | "notSubscribed".
    caf::replies_to<atom::unsub, client_actor>::with<std::string>,
    // thread/name/set on a loaded thread.
    caf::replies_to<atom::rename, protocol::thread_name_set_params>::with<atom::ok>,
    // thread/metadata/update, thread/revert, thread/inject_items on a loaded
    // thread, in order with what it stores.
    caf::replies_to<atom::edit, thread_edit>::with<thread_edit_answer>,
    // The idle-unload timer (generation): quit if still idle and unsubscribed.
    caf::reacts_to<atom::idle, uint64_t>,
    // thread/shellCommand: run the user's command as a turn of its own (ok
    // at once; its events follow), or an error while a turn runs.
    caf::replies_to<atom::shell, protocol::thread_shell_command_params,
                    client_actor>::with<atom::ok>,
    // thread/compact/start: compact the thread's history as a turn of its
    // own (ok at once; its events follow), or an error while a turn runs.
    caf::replies_to<atom::compact, client_actor>::with<atom::ok>,
    // review/start: review the target as a turn of its own (its turn at
    // once; its events follow), or an error while a turn runs.
    caf::replies_to<atom::review, protocol::review_start_params,
                    client_actor>::with<protocol::review_start_response>,
    // Interrupt the active turn with this id.
    caf::replies_to<atom::interrupt, std::string>::with<atom::ok>,
    // Steer input into the active turn, which must be the expected one.
    caf::replies_to<atom::steer, protocol::turn_steer_params,
                    client_actor>::with<protocol::turn_steer_response>,
    // The thread, with or without its turns.
    caf::replies_to<atom::read, bool>::with<protocol::thread_read_response>,
    // A client disconnected: stop sending to it.
    caf::reacts_to<atom::gone, client_actor>,
    // Backpressure (issue 22): the client is behind in reading (true), or
    // has caught up (false). While any subscriber is behind, the active
    // turn's model stream is held.
    caf::reacts_to<atom::pressure, client_actor, bool>,
    // Finish the active turn (interrupted) and quit.
    caf::replies_to<atom::shutdown>::with<atom::ok>,
    // -- from its turn --
    // An event of the active turn, to store and fan out in order.
    caf::reacts_to<atom::event, notification_ptr>,
    // Several, in order: fanned out as one message per client where nothing
    // between them waits for the store.
    caf::reacts_to<atom::event, notification_batch>,
    // -- from its approvals (each approval alone sends these) --
    // The approval waits on someone (a hook or the clients): the thread
    // shows waitingOnApproval until the approval has settled; a client that
    // subscribes meanwhile is sent to the approval to be asked too.
    caf::reacts_to<atom::awaiting, approval_ref, approval_actor>,
    // Which clients the approval may ask now: answered in order with the
    // thread's events, so every client has seen the item before its ask.
    caf::replies_to<atom::ask, approval_ref>::with<client_list>,
    // The approval has its outcome (and has voided every prompt still open).
    caf::reacts_to<atom::settled, approval_ref>,
    // -- from an MCP server's actor --
    // An MCP server's elicitation for this thread's user (ask.request ==
    // elicitation; ask.request_turn the turn whose call it is, or empty):
    // an approval actor of its own, not started (the asker sends
    // atom::decide and owns it: an exit signal withdraws it).
    caf::replies_to<atom::elicit, approval_ask>::with<approval_actor>,
    // Remember "acceptForSession" (an exact command) for this thread.
    caf::reacts_to<atom::grant, std::string>,
    // Remember an execpolicy amendment (a command prefix) for this thread.
    caf::reacts_to<atom::grant, std::vector<std::string>>,
    // Remember files accepted for the session.
    caf::reacts_to<atom::grant, path_grant>,
    // Remember an MCP tool whose calls were accepted for the session.
    caf::reacts_to<atom::grant, mcp_tool_grant>,
    // Remember permissions a client granted for the session (more sandbox).
    caf::reacts_to<atom::grant, sandbox_grant>,
    // The turn's model context, to store in order with its items.
    caf::reacts_to<atom::append, context_record>,
    // The turn compacted the thread's history: stored in order with its items.
    caf::reacts_to<atom::append, compacted_record>,
    // A phase of an action (from its turn or approval), stored in order with
    // the turn's items; ok once it is durable.
    caf::replies_to<atom::append, action_record>::with<atom::ok>,
    // -- from the thread manager --
    // Go on with a turn that has an action pending in the store (sent right
    // after the conversation is spawned, before any client's request).
    caf::reacts_to<atom::restore, resumed_turn>,
    // The turn ended.
    caf::reacts_to<atom::turn_done, turn_result>>;

/// Thread id -> conversation; the entry point connections talk to.
using thread_manager_actor = caf::typed_actor<
    caf::replies_to<atom::open, protocol::thread_start_params,
                    client_actor>::with<protocol::thread_session_response>,
    caf::replies_to<atom::turn_start, protocol::turn_start_params,
                    client_actor>::with<protocol::turn_start_response>,
    caf::replies_to<atom::interrupt, protocol::turn_interrupt_params>::with<atom::ok>,
    caf::replies_to<atom::shell, protocol::thread_shell_command_params,
                    client_actor>::with<atom::ok>,
    caf::replies_to<atom::steer, protocol::turn_steer_params,
                    client_actor>::with<protocol::turn_steer_response>,
    // command/exec (answered when the process has ended, after its deltas)
    // and its follow-ups by processId: write (bytes, closeStdin),
    // terminate, resize. The commands belong to the client.
    caf::replies_to<atom::exec_start, protocol::command_exec_params,
                    client_actor>::with<protocol::command_exec_response>,
    caf::replies_to<atom::exec_write, std::string, std::string, bool, client_actor>::with<atom::ok>,
    caf::replies_to<atom::exec_kill, std::string, client_actor>::with<atom::ok>,
    caf::replies_to<atom::exec_resize, std::string, protocol::terminal_size,
                    client_actor>::with<atom::ok>,
    caf::replies_to<atom::compact, protocol::thread_id_params, client_actor>::with<atom::ok>,
    caf::replies_to<atom::review, protocol::review_start_params,
                    client_actor>::with<protocol::review_start_response>,
    caf::replies_to<atom::read, protocol::thread_read_params>::with<protocol::thread_read_response>,
    caf::replies_to<atom::loaded, protocol::thread_loaded_list_params>::with<
        protocol::thread_loaded_list_response>,
    caf::replies_to<atom::resume, protocol::thread_resume_params,
                    client_actor>::with<protocol::thread_session_response>,
    caf::replies_to<atom::fork, protocol::thread_fork_params,
                    client_actor>::with<protocol::thread_session_response>,
    caf::replies_to<atom::list, protocol::thread_list_params>::with<protocol::thread_list_response>,
    // thread/archive (true) and thread/unarchive (false); the thread afterwards.
    caf::replies_to<atom::archive, protocol::thread_id_params, bool,
                    client_actor>::with<protocol::thread>,
    caf::replies_to<atom::rename, protocol::thread_name_set_params, client_actor>::with<atom::ok>,
    // thread/delete: unloads the thread (its turn ends interrupted), then
    // deletes what is stored of it.
    caf::replies_to<atom::erase, protocol::thread_id_params, client_actor>::with<atom::ok>,
    // thread/goal/get, /set, /clear: stored in the thread's rollout.
    caf::replies_to<atom::goal, goal_request, client_actor>::with<goal_answer>,
    // thread/metadata/update, thread/revert, thread/inject_items (loaded or not).
    caf::replies_to<atom::edit, thread_edit, client_actor>::with<thread_edit_answer>,
    caf::replies_to<atom::unsub, protocol::thread_id_params,
                    client_actor>::with<protocol::thread_unsubscribe_response>,
    // The tenant a thread belongs to (the default one for a thread stored
    // before tenants); "" for a thread nobody has; an error when the store
    // cannot say.
    caf::replies_to<atom::tenant, std::string>::with<std::string>,
    // An MCP server's elicitation for a loaded thread (ask.thread_id): the
    // conversation's approval actor for it ("thread not loaded: " when the
    // thread is not loaded here).
    caf::replies_to<atom::elicit, approval_ask>::with<approval_actor>,
    // Live counts of runtime objects.
    caf::replies_to<atom::stats>::with<runtime_counts>,
    // A client disconnected.
    caf::reacts_to<atom::gone, client_actor>,
    // Stop every conversation (their turns end interrupted), then quit.
    caf::replies_to<atom::shutdown>::with<atom::ok>,
    // Threads whose turn has an action pending in the store (at start).
    caf::reacts_to<atom::pending, std::vector<pending_thread>>,
    // A pending approval's stored deadline may have passed: load what is due.
    caf::reacts_to<atom::deadline>,
    // Cluster: this node's lease expired and other nodes may hold its
    // threads now: every loaded thread stops (its writes are refused by the
    // store anyway); answered with their number once all are gone.
    caf::replies_to<atom::rejoin>::with<uint64_t>>;

/// A cluster node's view of where threads live (actors/cluster/thread_router.hpp).
using thread_router_actor = caf::typed_actor<
    // Where a thread lives: "" for this node, else the node's name.
    caf::replies_to<atom::owner, std::string>::with<std::string>,
    // A new thread: its id and node ("" for this node).
    caf::replies_to<atom::open>::with<std::string, std::string>,
    // A linked, live peer's node actor (an error when there is none).
    caf::replies_to<atom::get, std::string>::with<cluster::node_actor>,
    // The node links (cluster::peer_watcher_actor): a peer came up (hello
    // done), or was lost (its name and why).
    caf::reacts_to<atom::peer_up, std::string, cluster::node_actor>,
    caf::reacts_to<atom::peer_lost, std::string, std::string>,
    // Its own timer: look at the cluster in the store (leases of lost
    // nodes, this node's own lease).
    caf::reacts_to<atom::members>,
    // This node's figures for parley/stats (JSON: the router's counts, the
    // approvals, the live objects).
    caf::replies_to<atom::stats>::with<std::string>,
    // Every member's figures, asked of the linked peers (JSON: "nodes", and
    // "totals" over the members that answered).
    caf::replies_to<atom::stats, atom::members>::with<std::string>>;

/// One per runtime: starts the store, the model and the thread manager, and
/// stops them in order.
using server_actor = caf::typed_actor<
    // The thread manager, the entry point for connections.
    caf::replies_to<atom::get>::with<thread_manager_actor>,
    // Cluster: the node's thread router (a null handle without a cluster).
    caf::replies_to<atom::get, atom::owner>::with<thread_router_actor>,
    // Stop every thread (turns end interrupted), then the store and model.
    caf::replies_to<atom::shutdown>::with<atom::ok>,
    // The server is going away (a signal): the store takes nothing more, so
    // what is pending stays pending for the next start.
    caf::replies_to<atom::seal>::with<atom::ok>>;

}  // namespace parley

// Local only: a list of actor handles never leaves the process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::client_list)
