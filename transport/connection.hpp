#pragma once
// One JSON-RPC client connection as an actor: a thin shell around an
// rpc::session (transport/rpc_session.hpp) that owns the protocol. The shell
// feeds it lines, sends the typed calls it makes to the thread manager, and
// is a client_actor: to the runtime it looks exactly like an in-process
// client.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/core/config.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/files/file_actors.hpp"
#include "actors/mcp/messages.hpp"
#include "transport/file_port.hpp"
#include "actors/cluster/thread_router.hpp"
#include "transport/cluster_session.hpp"
#include "transport/line_writer.hpp"
#include "transport/rpc_session.hpp"

namespace parley {

using connection_actor = client_actor::extend<
    // One line from the client.
    caf::reacts_to<atom::line, std::string>,
    // The client's input ended.
    caf::reacts_to<atom::eof>,
    // Its transport gave up on the client (it fell past its queue's bound):
    // the input ends, and what it sent but was not yet run is dropped.
    caf::reacts_to<atom::eof, atom::gone>,
    // A batch of changes under one of this client's fs/watch watches.
    caf::reacts_to<atom::fs_changed, std::string, std::vector<std::string>>,
    // Cluster: a line of this client's session on another node (relayed).
    caf::reacts_to<atom::relay, std::string, std::string>,
    // Cluster: that session ended.
    caf::reacts_to<atom::relay, std::string>,
    // Its own timers (cluster_session's retries).
    caf::reacts_to<atom::timeout, uint64_t>,
    // From its writer (issue 22): the client is behind in reading (true:
    // past the queue's high-water mark) or has caught up (false).
    caf::reacts_to<atom::pressure, bool>,
    // Its own, once per burst of lines (connection_options::write_burst):
    // hand the lines written since to the transport.
    caf::reacts_to<atom::flush>,
    // From the MCP hub: a server's startup state changed (the params of
    // mcpServer/startupStatus/updated, as JSON).
    caf::reacts_to<mcp::atom::startup, std::string>>;

struct connection_options {
  std::shared_ptr<const runtime_config> config;
  /// The runtime's (runtime::telemetry()): its counts and approval stats, and
  /// the ids of this connection's requests to the client. Required.
  std::shared_ptr<runtime_telemetry> telemetry;
  /// stdio: the server lives as long as its one connection. When the input
  /// ends, every thread is shut down before the connection stops.
  bool shutdown_on_close = true;
  /// How logs and wire traces name this connection ("stdio", "ws#3 127.0.0.1:5000").
  std::string label = "stdio";
  /// Cluster: where this node's clients' threads live; null without one.
  cluster::thread_router_actor cluster_router;
  /// Cluster: this connection speaks here for a client of another node
  /// (its lines come through `peer_relay`; its initialize is replayed).
  bool cluster_peer = false;
  cluster::session_relay_actor peer_relay;
  std::string replay_initialize;
  /// Who the client is: its credentials' tenant and subject (issue 22).
  tenant_identity identity;
  /// The runtime's MCP servers (runtime::mcp_hub()); invalid: none here.
  caf::actor mcp_hub;
  /// Where the connection hands its lines itself, called on its own thread
  /// (with the credit of the event being written, if any), instead of
  /// sending each to `out`: a WebSocket connection posts them straight to
  /// its I/O thread, with no writer actor to wait for on the scheduler's
  /// queues between a decision and its `serverRequest/resolved`. `out` still
  /// closes the output, after every line handed here. Empty: lines go to `out`.
  std::function<void(std::string, std::shared_ptr<const void>)> write_direct;
  /// stdio: where the connection hands its lines itself, a burst at a time
  /// (each line ends in '\n'; the vector is left empty), instead of one
  /// message to `out` per line. A burst is what the connection writes until
  /// it has handled the messages its mailbox held (a flush it sends itself,
  /// ahead of what comes after), or a cap: the writer's thread is woken once
  /// per burst rather than per line, with no actor between. `out` still
  /// closes the output, after every burst handed here. Takes precedence over
  /// write_direct.
  std::function<void(std::vector<std::string>&)> write_burst;
};

struct connection_state {
  static inline const char* name = "connection";
  /// A connection that stops without closing its output (killed) still
  /// hands the lines it wrote.
  ~connection_state() {
    if (!burst.empty() && options.write_burst) options.write_burst(burst);
  }
  connection_options options;
  thread_manager_actor threads;
  line_writer_actor out;
  std::unique_ptr<rpc::runtime_port> runtime;  // before the session that uses it
  std::unique_ptr<rpc::file_port> files;       // likewise
  std::unique_ptr<connection_link> cluster_link;       // likewise
  std::shared_ptr<cluster_session> cluster;            // likewise
  std::unique_ptr<rpc::session> session;
  /// Backpressure (issue 22): whether the client is behind, and every actor
  /// that sent it events (its threads' conversations, its commands): each is
  /// told when that changes, and one heard from first while behind at once.
  bool pressing = false;
  std::set<caf::actor_addr> event_sources;
  /// The credit of the event being written (outgoing_event::credit): it goes
  /// with its line to the writer, given back once the line is queued.
  std::shared_ptr<const void> writing_credit;
  /// write_burst: the lines written since the last hand-off, their bytes,
  /// and the credits they hold (given back once the lines are queued);
  /// whether this burst's flush is on its way.
  std::vector<std::string> burst;
  size_t burst_bytes = 0;
  std::vector<std::shared_ptr<const void>> burst_credits;
  bool flush_sent = false;
  int flush_rounds = 0;  // how often that flush waited another round
  /// cluster_session's timers, by token.
  std::map<uint64_t, std::function<void()>> timers;
  uint64_t next_timer = 0;
  /// The input ended; its end waits for the lines held before it.
  bool eof_seen = false;
  /// The input ended: replies still to come are waited for until then.
  std::optional<std::chrono::steady_clock::time_point> answers_due;
};

connection_actor::behavior_type connection(connection_actor::stateful_pointer<connection_state> self,
                                           thread_manager_actor threads, line_writer_actor out,
                                           connection_options options);

}  // namespace parley
