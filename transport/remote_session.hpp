#pragma once
// The owner's side of a client of another node: a connection actor on this
// node whose lines come from the client's node and go back to it through
// that node's relay. It is an ordinary connection in every other way
// (subscriptions, approval requests, exactly-one decisions), so a remote
// thread serves every method a local one does.

#include <caf/actor_system.hpp>

#include "actors/core/node_interface.hpp"
#include "transport/connection.hpp"

namespace parley {

/// Spawns the session for `open`; `base` carries this node's config and
/// telemetry. The session ends when the client leaves (eof), or when the
/// client's node is lost (its relay goes down), as a closed connection does.
cluster::remote_session_actor open_remote_session(caf::actor_system& sys,
                                                  thread_manager_actor threads,
                                                  connection_options base,
                                                  const cluster::session_open& open,
                                                  cluster::session_relay_actor relay);

}  // namespace parley
