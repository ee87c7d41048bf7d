#pragma once
// What crosses between the nodes of a cluster: only these typed messages,
// each with an inspect() and registered once (actors/cluster/node_types.hpp), over
// CAF's middleman (TLS with the cluster's CA). A client's requests for a
// thread that lives on another node travel as the JSON-RPC lines they are,
// to a session on the owner that speaks for the client there; that
// session's lines (responses, notifications, approval requests) come back
// the same way. So every method works on a remote thread exactly as on a
// local one, and the protocol's JSON is the one versioned format between
// nodes (no second encoding of parley's internal types to keep in step).

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <cstdint>
#include <string>

#include "actors/core/atoms.hpp"

namespace parley::cluster {

/// What two nodes tell each other when a link opens.
struct node_hello {
  std::string cluster;
  std::string node;
  uint64_t incarnation = 0;
  /// message_table_fingerprint() of the sender's build.
  std::string table;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_hello& x) {
  return f(caf::meta::type_name("parley.node_hello"), x.cluster, x.node, x.incarnation, x.table);
}

/// A client on the sending node wants a session on the receiving node.
struct session_open {
  /// The node the client is connected to.
  std::string origin;
  /// How logs name the client ("ws#3 127.0.0.1:5000 via n1").
  std::string label;
  /// The client's `initialize` request line, replayed so that the remote
  /// session knows the client as the local one does.
  std::string initialize_line;
  /// stdio: the client's input closing cancels its approvals; a socket
  /// client leaving is not an answer.
  bool closing_cancels = false;
  /// Who the client is (issue 22), as its node authenticated it: the remote
  /// session sees only this tenant's threads (an operator's: all). Nodes
  /// are members authenticated by the cluster CA, so this is taken as said.
  std::string tenant;
  std::string subject;
  bool is_operator = false;
  bool local = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_open& x) {
  return f(caf::meta::type_name("parley.session_open"), x.origin, x.label, x.initialize_line,
           x.closing_cancels, x.tenant, x.subject, x.is_operator, x.local);
}

/// On the client's node: lines the remote session sends the client, in
/// order; close when the remote session ends.
using session_relay_actor = caf::typed_actor<caf::reacts_to<atom::line, std::string>,
                                             caf::reacts_to<atom::close>>;

/// On the thread's node: the client's lines (requests and its answers to
/// approval requests) for threads that live there; eof when the client left.
using remote_session_actor = caf::typed_actor<caf::reacts_to<atom::line, std::string>,
                                              caf::reacts_to<atom::eof>>;

/// Each node publishes one on its middleman.
using node_actor = caf::typed_actor<
    // The link's first message, both ways: a peer of another cluster or of
    // another message table is refused with a clear error.
    caf::replies_to<atom::hello, node_hello>::with<node_hello>,
    // Open a session on this node for a client of the sender's.
    caf::replies_to<atom::open, session_open, session_relay_actor>::with<remote_session_actor>,
    // This node's parley/stats (JSON).
    caf::replies_to<atom::stats>::with<std::string>>;

}  // namespace parley::cluster
