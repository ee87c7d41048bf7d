#pragma once
// One loaded thread. The conversation is the single sequencer of its
// thread's events: everything a client sees about the thread (turn and item
// events, approval requests and their withdrawal, status changes) leaves
// through its outbox, in order. Events that must be durable first (a
// completed item, a completed turn) wait in the outbox until the store has
// acknowledged them, and hold back everything behind them.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/approval/policy.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/threads/boxed.hpp"
#include "actors/threads/event_outbox.hpp"

namespace parley {

/// Sticky settings of a thread (thread/start, overridden by turn/start).
struct conversation_settings {
  std::string cwd;
  protocol::approval_policy policy;
  protocol::sandbox_policy sandbox;
  std::string reviewer = "user";
  std::string model;
  /// The tools its client declared on thread/start (kept while it is loaded).
  std::vector<protocol::dynamic_tool> dynamic_tools;
};

/// An approval of the active turn that waits on someone: a client that
/// subscribes meanwhile is offered to it.
struct waiting_approval {
  approval_actor handle;
  counted live;  // the runtime's pending_asks
  /// A unit of the tenant's and the turn's connection's pending approvals.
  usage_grant usage;
  /// Set when a limit refused it: it is never asked, and fails closed.
  caf::error refused;
  /// An MCP server's elicitation during this turn: cancelled when the turn
  /// ends (its call cannot outlive it). Empty for every other approval,
  /// which its turn owns.
  std::string elicitation_turn;
};

struct active_turn {
  turn_actor handle;  // the turn actor (stopped with an exit signal)
  std::string id;
  int64_t started_at = 0;  // unix seconds
  int64_t started_ms = 0;
  client_actor owner;             // the client that started it answers its asks
  std::set<std::string> waiting;  // items whose approval waits on someone
  std::set<std::string> waiting_input;  // questions to the user (never parked)
  bool interrupt_sent = false;
  bool held = false;  // told to hold its model stream (a subscriber is behind)
  /// It runs the user's own command (thread/shellCommand): no model, so it
  /// takes no steered input.
  bool user_shell = false;
  bool compaction = false;  // thread/compact/start's turn: it takes no input
  bool review = false;      // review/start's turn: it takes no input
  /// A record of this turn was not stored: the turn stops and ends failed
  /// with this reason, never completed.
  std::optional<std::string> store_error;
  /// A unit of the tenant's and the owner's connection's running turns,
  /// released when the turn ends (this struct is reset).
  usage_grant usage;
};

struct conversation_state {
  static inline const char* name = "conversation";
  counted live;  // the runtime's conversations
  /// The runtime's services, one copy for all of the manager's threads
  /// (a copy each was 160 bytes per loaded thread).
  std::shared_ptr<const runtime_services> svc;
  protocol::thread meta;
  conversation_settings settings;
  std::vector<client_actor> subscribers;
  /// Subscribers behind in reading (issue 22): while any is, the active
  /// turn's model stream is held (a thread both a slow and a quick client
  /// watch goes at the slow one's pace).
  boxed<std::vector<client_actor>> pressing;
  /// Subscribers whose thread/resume reply is still being made: no approval
  /// asks them before it has left (they are offered the waiting ones then).
  std::vector<client_actor> joining;
  // Boxed (a pointer while unset): what only a thread with turns has. Most
  // loaded threads are idle, and each inline optional cost its full size in
  // every conversation (issue 23: memory per idle loaded thread).
  /// What clients allowed for the session (commands, prefixes, paths, MCP
  /// tools); none until the first grant.
  boxed<session_grants> grants;
  /// Permissions clients granted for the session beyond the sandbox
  /// (item/permissions/requestApproval, scope session): every later turn's.
  /// In memory, as Codex keeps them: gone when the thread unloads.
  boxed<sandbox_grant> granted;
  boxed<active_turn> active;
  /// The turn that ended last, as it ended: a read while its end is still
  /// on its way to the store shows it ended, not cut off.
  boxed<protocol::turn> last_ended;
  boxed<protocol::token_breakdown> tokens;  // what its models used while loaded (none yet)
  /// The size of the thread's last model request (tokens; 0: unknown or
  /// compacted since): its next turn's model compacts first at the limit.
  int64_t last_request_tokens = 0;
  boxed<std::unordered_map<uint64_t, waiting_approval>> approvals;  // by approval key
  event_outbox outbox;  // everything the thread says leaves through it, in order
  std::vector<caf::typed_response_promise<atom::ok>> shutdown_waiters;
  bool closing = false;
  /// Items of the active turn whose approval's ask is stored: while only
  /// those wait and nobody is subscribed, the thread may unload (park) and
  /// nothing is lost.
  boxed<std::set<std::string>> asked_durably;
  /// The thread unloaded while its turn waits on a person (see park()).
  bool parked = false;
  /// Replies promised to requesters that wait on the store: the actor must
  /// not quit before they are delivered (CAF 0.17 drops an undelivered
  /// promise silently, and the requester would wait forever).
  size_t awaiting_store = 0;
  /// A fork's copied history, for the reply to its first open (then dropped).
  boxed<std::vector<protocol::turn>> fork_turns;
  /// A fork's copied model context, stored with the thread (then dropped).
  boxed<std::vector<context_item>> fork_context;
  /// Generation of the idle-unload timer (a newer arm voids older ones).
  uint64_t idle_generation = 0;
  /// A thread/revert is rewriting the history: no turn starts until it is
  /// done (the turn would read the history it replaces).
  bool reverting = false;
};

/// The conversation actor. Spawned as a class (`spawn<conversation>(svc,
/// meta, settings, fork_context)`) so that every conversation shares one
/// behavior: CAF 0.17 builds a behavior per actor from its handlers (37
/// cases here, ~1.5 KB), the largest cost of an idle loaded thread after the
/// actor itself (issue 23). Its handlers find their actor through
/// this_conversation(), which is set while this actor runs (resume()).
///
/// `meta.turns` is the thread's history when it is a fork (written to the
/// store with the thread and returned by the first open), `fork_context`
/// the model context of those turns; otherwise both are empty.
class conversation : public caf::stateful_actor<conversation_state, conversation_actor::base> {
 public:
  using super = caf::stateful_actor<conversation_state, conversation_actor::base>;

  conversation(caf::actor_config& cfg, std::shared_ptr<const runtime_services> svc,
               protocol::thread meta,
               conversation_settings settings, std::vector<context_item> fork_context);

  behavior_type make_behavior() override;

  /// Runs the actor with this_conversation() naming it.
  caf::resumable::resume_result resume(caf::execution_unit* ctx, size_t max_throughput) override;
};

/// Settings for a thread from its stored metadata plus a client's overrides.
conversation_settings settings_for(const protocol::thread& meta,
                                   const protocol::thread_overrides& overrides,
                                   const runtime_config& config);

}  // namespace parley
