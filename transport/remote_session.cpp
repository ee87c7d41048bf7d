#include "transport/remote_session.hpp"

#include "actors/core/log.hpp"

namespace parley {

namespace remote_session_detail {

/// The remote session's writer: each line to the client's node, in order.
line_writer_actor::behavior_type relay_writer(line_writer_actor::pointer self,
                                              cluster::session_relay_actor relay) {
  return {
      [self, relay](std::string& line) { self->send(relay, atom::line::value, std::move(line)); },
      [self, relay](std::string& line, std::shared_ptr<const void>&) {
        self->send(relay, atom::line::value, std::move(line));
      },
      [](atom::flush) {},
      [self, relay](atom::close) {
        self->send(relay, atom::close::value);
        self->quit();
        return atom::ok::value;
      },
  };
}

}  // namespace remote_session_detail

cluster::remote_session_actor open_remote_session(caf::actor_system& sys,
                                                  thread_manager_actor threads,
                                                  connection_options base,
                                                  const cluster::session_open& open,
                                                  cluster::session_relay_actor relay) {
  auto writer = sys.spawn(remote_session_detail::relay_writer, relay);
  base.shutdown_on_close = false;  // the runtime outlives any one client
  base.label = open.label;
  base.cluster_peer = true;
  base.cluster_router = cluster::thread_router_actor{};  // what reaches here runs here
  base.peer_relay = relay;
  base.replay_initialize = open.initialize_line;
  base.identity.tenant = open.tenant.empty() ? tenant_identity::default_tenant : open.tenant;
  base.identity.subject = open.subject;
  base.identity.is_operator = open.is_operator;
  base.identity.local = open.local;
  PARLEY_INFO("cluster event=remote_session client=\"{}\" from={}", open.label, open.origin);
  auto conn = sys.spawn(connection, std::move(threads), writer, std::move(base));
  return caf::actor_cast<cluster::remote_session_actor>(conn);
}

}  // namespace parley
