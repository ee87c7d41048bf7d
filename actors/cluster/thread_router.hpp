#pragma once
// A cluster node's view of where threads live, for its client connections:
// the lease holder (PostgreSQL) of a loaded thread, else the node that
// rendezvous hashing of the thread's id over the live nodes picks. It also
// takes over the threads of a node that was lost: when the lost node's
// lease has expired, each survivor loads the orphaned threads with an
// action pending that hashing gives it (the durable-work rules go on from
// the store), and the others move when a client touches them.

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "actors/cluster/cluster_config.hpp"
#include "actors/core/node_interface.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/telemetry.hpp"

namespace parley::cluster {

using parley::thread_router_actor;  // actors/core/interfaces.hpp

/// Rendezvous (highest random weight) hashing: the node among `live` with
/// the highest score for `thread_id`; stable for a given set of nodes, and a
/// node joining or leaving moves only the threads it wins or held.
std::string rendezvous_owner(const std::string& thread_id, const std::vector<std::string>& live);

struct thread_router_state {
  static inline const char* name = "thread_router";
  std::shared_ptr<const cluster_config> config;
  store_actor store;
  thread_manager_actor threads;
  std::shared_ptr<runtime_telemetry> telemetry;  // this node's counts (parley/stats)
  std::map<std::string, node_actor> peers;  // linked and said hello
  /// Lost peers whose threads wait for their lease to expire.
  std::set<std::string> lost;
  bool fenced = false;
  uint64_t taken_over = 0;
  uint64_t placed_here = 0, placed_there = 0;
};

thread_router_actor::behavior_type thread_router(
    thread_router_actor::stateful_pointer<thread_router_state> self,
    std::shared_ptr<const cluster_config> config, store_actor store,
    thread_manager_actor threads, std::shared_ptr<runtime_telemetry> telemetry);

/// The cluster's figures from each member's (node_stats JSON texts, or
/// {"node", "reachable": false, "error"} for a member that did not answer):
/// {"nodes": [...by name], "totals": the sums of the members that answered}.
nlohmann::json cluster_stats_of(std::vector<nlohmann::json> nodes);

}  // namespace parley::cluster
