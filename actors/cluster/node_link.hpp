#pragma once
// The node link: this node's side of the cluster's links, one actor per
// node. It publishes this node's node_actor on the configured address only
// (TLS: CAF's openssl module with the cluster CA; no plain listener). One
// connection per pair of members: the member whose name sorts first dials
// the other through the openssl middleman actor's asynchronous `connect` (no
// scheduler thread waits on a socket) and its node_actor says hello with a
// finite timeout; each side uses the other only when the hello matches
// (cluster name, the member name the file gives that address, the message
// table); the dialled side learns the dialler's node_actor as the sender of
// that hello. (CAF 0.17.6's BASP does not survive two connections between
// the same two nodes: a redundant one, closed, takes the routes with it and
// the link flaps.) It monitors
// each peer's node_actor (a down_msg, remote_link_unreachable when the link
// is lost or the heartbeat goes silent past connection_timeout, means "peer
// lost") and reconnects with a capped backoff.
//
// Local interface (node_link_actor), for this node's actors only:
//   request(link, t, listen)       -> uint16_t: the port this node listens
//                                     on, once it does (an error if it
//                                     cannot: address taken, ...).
//   request(link, t, atom::get)    -> peer_map: the peers whose link is up
//                                     and whose hello matched, by name.
//   send(link, watch, watcher)     the watcher gets peer_up for every peer
//                                     up now, then peer_up / peer_lost as
//                                     they happen (in order, per peer); it is
//                                     forgotten when it terminates.
// A peer in the view may still fail a request (a link can drop any time):
// every remote request needs a finite timeout (CAF #1466) and the store's
// lease, not the view, decides who owns a thread.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "actors/cluster/cluster_config.hpp"
#include "actors/core/node_interface.hpp"

namespace parley::cluster {

namespace link_atom {
// clang-format off
using listen    = caf::atom_constant<caf::atom("listen")>;    // this node's port, once bound
using watch     = caf::atom_constant<caf::atom("watch")>;     // subscribe to peer changes
using peer_up   = parley::atom::peer_up;                      // a peer's link is up
using peer_lost = parley::atom::peer_lost;                    // a peer's link is gone
using dial      = caf::atom_constant<caf::atom("dial")>;      // (internal) try a member
using greet     = caf::atom_constant<caf::atom("greet")>;     // (internal) say hello to a peer
using greeted   = caf::atom_constant<caf::atom("greeted")>;   // (internal) a member said hello
// clang-format on
}  // namespace link_atom

/// The connected peers: member name -> its node_actor.
using peer_map = std::map<std::string, node_actor>;

/// What a subscriber of the node link receives.
using peer_watcher_actor =
    caf::typed_actor<caf::reacts_to<link_atom::peer_up, std::string, node_actor>,
                     // the peer's name and why (CAF's reason, rendered)
                     caf::reacts_to<link_atom::peer_lost, std::string, std::string>>;

using node_link_actor = caf::typed_actor<
    caf::replies_to<link_atom::listen>::with<uint16_t>,
    caf::replies_to<atom::get>::with<peer_map>,
    caf::reacts_to<link_atom::watch, peer_watcher_actor>,
    // Internal: (member, attempt generation); a member's endpoint greeted us.
    caf::reacts_to<link_atom::dial, std::string, uint64_t>,
    caf::reacts_to<link_atom::greeted, std::string, node_actor>>;

/// Opens a session on this node for a peer's client (the `open` of
/// node_actor); an invalid handle refuses (the peer gets an error).
using session_factory =
    std::function<remote_session_actor(const session_open&, const session_relay_actor&)>;
/// Answers a peer's `stats` (delivers the JSON text, or an error, later).
using stats_source = std::function<void(caf::typed_response_promise<std::string>)>;

struct node_link_options {
  std::shared_ptr<const cluster_config> config;
  /// This process's incarnation (sent in hello; the store's node lease
  /// carries the same number).
  uint64_t incarnation = 0;
  /// The message table this node claims; empty = message_table_fingerprint
  /// of the system (tests override it to play a node of another build).
  std::string table;
  session_factory open_session;
  stats_source stats;
};

/// Prepares a CAF config for a cluster node, before the actor system
/// exists: loads the middleman and the openssl module, sets the TLS files
/// (which turns on certificate authentication both ways), the heartbeat,
/// the connection timeout and the app identifier (the cluster's name), and
/// registers the types that cross nodes.
void configure_cluster_system(caf::actor_system_config& cfg, const cluster_config& cluster);

/// Spawns the node link (and the node_actor it publishes). The system must
/// have been configured by configure_cluster_system.
node_link_actor spawn_node_link(caf::actor_system& sys, node_link_options options);

/// How long a link waits before trying a member again after `failures`
/// failed attempts in a row (doubling from 100 ms, capped at
/// connection_timeout).
std::chrono::milliseconds reconnect_delay(const cluster_config& cluster, uint32_t failures);

}  // namespace parley::cluster
