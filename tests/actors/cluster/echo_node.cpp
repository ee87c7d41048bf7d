#include "tests/actors/cluster/echo_node.hpp"

#include <caf/scoped_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/runtime/runtime.hpp"

namespace parley::cluster::testing {

namespace echo_detail {

remote_session_actor::behavior_type echo_session(remote_session_actor::pointer self,
                                                 session_relay_actor relay) {
  return {
      [self, relay](atom::line, const std::string& line) {
        self->send(relay, atom::line::value, "echo: " + line);
      },
      [self, relay](atom::eof) {
        self->send(relay, atom::close::value);
        self->quit();
      },
  };
}

}  // namespace echo_detail

echo_node::echo_node(std::shared_ptr<const cluster_config> config, std::string table) {
  configure_scheduler(caf_config_, 2);
  configure_cluster_system(caf_config_, *config);
  system_ = std::make_unique<caf::actor_system>(caf_config_);
  node_link_options options;
  options.config = config;
  options.incarnation = 1;
  options.table = std::move(table);
  auto* sys = system_.get();
  options.open_session = [sys](const session_open&, const session_relay_actor& relay) {
    return sys->spawn(echo_detail::echo_session, relay);
  };
  auto name = config->node;
  options.stats = [name](caf::typed_response_promise<std::string> rp) {
    rp.deliver("{\"node\":\"" + name + "\"}");
  };
  link_ = spawn_node_link(*system_, std::move(options));
}

echo_node::~echo_node() {
  caf::anon_send_exit(link_, caf::exit_reason::user_shutdown);
  link_ = nullptr;
  system_.reset();  // waits for the actors, then stops the middleman
}

uint16_t echo_node::wait_listening() {
  caf::scoped_actor self{*system_};
  uint16_t port = 0;
  std::string problem;
  self->request(link_, std::chrono::seconds(10), link_atom::listen::value)
      .receive([&port](uint16_t p) { port = p; },
               [&](caf::error& err) { problem = system_->render(err); });
  if (port == 0) throw std::runtime_error("not listening: " + problem);
  return port;
}

peer_map echo_node::peers() {
  caf::scoped_actor self{*system_};
  peer_map out;
  self->request(link_, std::chrono::seconds(5), atom::get::value)
      .receive([&out](peer_map& m) { out = std::move(m); }, [](caf::error&) {});
  return out;
}

}  // namespace parley::cluster::testing
