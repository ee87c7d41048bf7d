#pragma once
// The embeddable parley runtime: an actor system, the process reactor, and
// the server actor (which owns the store, the model and the thread manager). A host links parley_actors,
// creates a runtime, and attaches connections: the stdio JSON-RPC connection
// (transport/) or an in_process_client (typed messages, no JSON, no pipes).

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <memory>
#include <mutex>

#include "actors/cluster/node_link.hpp"
#include "actors/core/config.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"
#include "actors/store/rollout_file.hpp"
#include <optional>

namespace parley {

class runtime {
 public:
  /// Throws std::runtime_error if the runtime cannot start (e.g. another
  /// process owns the home of a local store).
  explicit runtime(runtime_config config = {});
  /// Shuts down (if not done yet) and waits for every actor.
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  caf::actor_system& system() { return *system_; }
  const runtime_config& config() const { return *config_; }
  std::shared_ptr<const runtime_config> shared_config() const { return config_; }

  /// The entry point connections send requests to.
  thread_manager_actor threads() const { return threads_; }

  /// Cluster: opens the sessions other nodes' clients ask for (the
  /// transport's connections); a peer's open is refused until then.
  void serve_cluster_sessions(cluster::session_factory open);

  /// Cluster: where this node's clients' threads live (null without one).
  thread_router_actor thread_router() const { return router_; }
  /// A cluster node's link to the other nodes (runtime_config::cluster set;
  /// else an invalid handle): who is connected, peer up / lost
  /// (actors/cluster/node_link.hpp).
  cluster::node_link_actor cluster_link() const { return cluster_link_; }

  /// The MCP servers of config.toml (actors/mcp/mcp_hub.hpp): what the
  /// connections' mcpServer* methods ask.
  caf::actor mcp_hub() const { return mcp_hub_; }

  /// This runtime's counts, approval stats and key sequences (a connection
  /// gets it at spawn).
  std::shared_ptr<runtime_telemetry> telemetry() const { return telemetry_; }

  /// Orderly stop: every active turn ends interrupted (pending approvals are
  /// withdrawn, running commands killed), then the store and model stop.
  /// Blocks the calling (non-actor) thread until that is done.
  void shutdown();

  /// The process is going away (a signal, not a client leaving): the store
  /// writes and syncs what it was given and then takes nothing more, so the
  /// orderly stop that follows leaves pending approvals, decisions and
  /// started actions on disk as they were, for the next start to go on
  /// with. Blocks the calling (non-actor) thread until the store is sealed.
  void seal_store();

 private:
  /// Spawns the node link and waits until this node listens (throws if it
  /// cannot).
  void start_cluster_link();

  std::optional<store::home_lock> lock_;  // local store: one process per home
  caf::actor_system_config caf_config_;
  std::unique_ptr<caf::actor_system> system_;
  std::shared_ptr<const runtime_config> config_;
  std::shared_ptr<runtime_telemetry> telemetry_;
  std::shared_ptr<process_reactor> reactor_;
  server_actor server_;
  thread_manager_actor threads_;
  thread_router_actor router_;
  cluster::node_link_actor cluster_link_;
  caf::actor mcp_hub_;
  struct session_slot {
    std::mutex lock;  // set by the transport, read by the node endpoint
    cluster::session_factory open;
  };
  std::shared_ptr<session_slot> sessions_ = std::make_shared<session_slot>();
  bool stopped_ = false;
};

/// CAF settings parley runs with: the sharing scheduler, one worker per core
/// (the work-stealing default collapses on fan-out on small machines), and
/// parley's clock, which wakes its thread only for what is due soonest
/// (lazy_actor_clock.hpp).
void configure_scheduler(caf::actor_system_config& cfg, size_t threads);

}  // namespace parley
