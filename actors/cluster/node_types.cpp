// The message table between nodes: what register_cluster_types registers and
// what message_table_fingerprint digests come from the same list, so a type
// added to one is in the other.

#include <caf/actor_system.hpp>
#include <caf/deep_to_string.hpp>

#include <algorithm>
#include <vector>

#include "actors/approval/audit/sha256.hpp"
#include "actors/core/node_interface.hpp"
#include "actors/cluster/node_types.hpp"

namespace parley::cluster {

namespace node_types {

// Bump when a crossing message changes meaning without changing its shape
// (same fields, other semantics): nodes of different versions then refuse
// each other at hello instead of misreading each other.
constexpr const char* protocol_version = "parley-cluster/1";

// Calls `f.template type<T>(name)` for each type that crosses nodes.
template <class F>
void for_each_type(F&& f) {
  f(static_cast<node_hello*>(nullptr), "parley.node_hello");
  f(static_cast<session_open*>(nullptr), "parley.session_open");
  f(static_cast<session_relay_actor*>(nullptr), "parley.session_relay_actor");
  f(static_cast<remote_session_actor*>(nullptr), "parley.remote_session_actor");
  f(static_cast<node_actor*>(nullptr), "parley.node_actor");
}

template <class T>
std::string shape_of() {
  // A default value printed through inspect(): the field list and kinds, so
  // a field added, removed or retyped changes the digest.
  if constexpr (caf::is_typed_actor<T>::value)
    return "handle";
  else
    return caf::deep_to_string(T{});
}

}  // namespace node_types

void register_cluster_types(caf::actor_system_config& cfg) {
  node_types::for_each_type([&cfg](auto* type, const char* name) {
    using T = std::remove_pointer_t<decltype(type)>;
    cfg.add_message_type<T>(name);
  });
}

std::string message_table_fingerprint(const caf::actor_system& sys) {
  std::vector<std::string> parts;
  for (auto& set : {sys.message_types<node_actor>(), sys.message_types<session_relay_actor>(),
                    sys.message_types<remote_session_actor>()})
    for (auto& signature : set) parts.push_back("signature " + signature);
  node_types::for_each_type([&parts](auto* type, const char* name) {
    using T = std::remove_pointer_t<decltype(type)>;
    parts.push_back(std::string{"type "} + name + " " + node_types::shape_of<T>());
  });
  std::sort(parts.begin(), parts.end());
  audit::sha256 digest;
  digest.update(node_types::protocol_version);
  for (auto& part : parts) {
    digest.update("\n");
    digest.update(part);
  }
  return audit::to_hex(digest.finish());
}

}  // namespace parley::cluster
