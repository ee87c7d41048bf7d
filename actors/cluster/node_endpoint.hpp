#pragma once
// The node_actor a node publishes: answers a peer's hello (refusing one of
// another cluster or message table), opens sessions through the session
// factory, answers stats through the stats source. Private to node_link.

#include <memory>
#include <string>

#include "actors/cluster/node_link.hpp"

namespace parley::cluster {

/// Why a peer's hello is refused ("" when it is fine). `expected_node`: the
/// member we dialled (empty when the peer dialled us: any other member).
std::string hello_problem(const node_hello& theirs, const cluster_config& cluster,
                          const std::string& table, const std::string& expected_node);

/// What the node link's endpoint answers: node_actor (published with
/// node_actor's signature only) and, locally, `greet`: say hello to a peer
/// from this node_actor, so the peer learns this node's handle from it.
using node_endpoint_actor =
    node_actor::extend<caf::replies_to<link_atom::greet, node_actor>::with<node_hello>>;

struct node_endpoint_setup {
  std::shared_ptr<const cluster_config> config;
  node_hello self;  // what this node answers
  session_factory open_session;
  stats_source stats;
  node_link_actor link;  // told when a member greets us
};

node_endpoint_actor::behavior_type node_endpoint(node_endpoint_actor::pointer self,
                                                 node_endpoint_setup setup);

}  // namespace parley::cluster
