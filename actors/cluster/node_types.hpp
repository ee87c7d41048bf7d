#pragma once
// The registration of the messages that cross nodes
// (actors/core/node_interface.hpp), and their fingerprint.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <string>

#include "actors/core/node_interface.hpp"

namespace parley::cluster {

/// Registers every type above with CAF (once per actor system config).
void register_cluster_types(caf::actor_system_config& cfg);

/// A digest of every message that crosses nodes (the interfaces' signatures
/// as CAF checks them, the types' names and fields, a protocol version):
/// nodes with different ones refuse each other. Needs the actor system
/// whose config ran register_cluster_types: CAF names a signature's types by
/// what that system registered.
std::string message_table_fingerprint(const caf::actor_system& sys);

}  // namespace parley::cluster
