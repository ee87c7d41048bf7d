#include "actors/cluster/node_link.hpp"
#include "actors/cluster/node_types.hpp"

#include <caf/io/middleman_actor.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/cluster/node_endpoint.hpp"
#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"

namespace parley::cluster {

namespace node_link_impl {

struct peer_slot {
  member_address address;
  node_actor handle;        // set while the link is up and hello matched
  uint64_t generation = 0;  // bumped when a pending attempt or timer goes stale
  uint32_t failures = 0;
  bool dialling = false;
  std::string last_problem;  // logged as an error once, then quietly
};

struct state {
  node_link_options options;
  node_hello self_hello;
  node_endpoint_actor endpoint;
  caf::optional<uint16_t> port;
  caf::error listen_error;
  std::vector<caf::typed_response_promise<uint16_t>> waiting_for_port;
  std::map<std::string, peer_slot> peers;  // every other member
  std::vector<peer_watcher_actor> watchers;
  static inline const char* name = "node_link";
};

using link_pointer = node_link_actor::stateful_pointer<state>;

const cluster_config& config_of(link_pointer self) { return *self->state.options.config; }

void tell_watchers(link_pointer self, const std::string& name, bool up, const std::string& why) {
  auto& slot = self->state.peers[name];
  for (auto& w : self->state.watchers) {
    if (up)
      self->send(w, link_atom::peer_up::value, name, slot.handle);
    else
      self->send(w, link_atom::peer_lost::value, name, why);
  }
}

// One TCP connection per pair of nodes: the member whose name sorts first
// dials; the other learns its node_actor from its hello. A second connection
// between two nodes (both dialling, or dialling back) breaks CAF 0.17.6's
// BASP: closing the redundant one takes the routes with it, the proxies die
// with remote_link_unreachable, and the link flaps (seen in the tests).
bool dials(link_pointer self, const std::string& name) { return config_of(self).node < name; }

void schedule_dial(link_pointer self, const std::string& name) {
  auto& slot = self->state.peers[name];
  auto delay = reconnect_delay(config_of(self), slot.failures);
  self->delayed_send(self, delay, link_atom::dial::value, name, slot.generation);
}

void attempt_failed(link_pointer self, const std::string& name, uint64_t generation,
                    const std::string& problem) {
  auto& slot = self->state.peers[name];
  if (slot.generation != generation) return;  // a newer attempt is under way
  slot.dialling = false;
  ++slot.failures;
  if (problem != slot.last_problem)
    PARLEY_ERROR("cluster event=peer_refused node={} peer={} address={}:{} problem=\"{}\"",
                 config_of(self).node, name, slot.address.host, slot.address.port, problem);
  else
    PARLEY_DEBUG("cluster event=peer_retry node={} peer={} problem=\"{}\"", config_of(self).node,
                 name, problem);
  slot.last_problem = problem;
  schedule_dial(self, name);
}

void peer_greeted_back(link_pointer self, const std::string& name, uint64_t generation,
                       node_actor peer, const node_hello& theirs) {
  auto& slot = self->state.peers[name];
  if (slot.generation != generation || slot.handle) return;
  auto problem =
      hello_problem(theirs, config_of(self), self->state.self_hello.table, slot.address.name);
  if (!problem.empty()) return attempt_failed(self, name, generation, "hello: " + problem);
  slot.dialling = false;
  slot.failures = 0;
  slot.last_problem.clear();
  slot.handle = std::move(peer);
  self->monitor(slot.handle);
  PARLEY_INFO("cluster event=peer_up node={} peer={} incarnation={}", config_of(self).node, name,
              theirs.incarnation);
  tell_watchers(self, name, true, {});
}

// One attempt: the openssl middleman actor connects (TLS handshake, BASP
// handshake, interface check) and answers asynchronously; then hello.
void dial(link_pointer self, const std::string& name) {
  auto& slot = self->state.peers[name];
  if (slot.handle || slot.dialling) return;
  slot.dialling = true;
  auto generation = ++slot.generation;
  auto timeout = config_of(self).connection_timeout;
  auto mm = self->system().openssl_manager().actor_handle();
  self->request(mm, timeout, caf::connect_atom::value, slot.address.host, slot.address.port)
      .then(
          [self, name, generation, timeout](caf::node_id&, caf::strong_actor_ptr& ptr,
                                            std::set<std::string>& interface) {
            if (!ptr)
              return attempt_failed(self, name, generation, "no node published at the address");
            if (!self->system().assignable(interface, self->system().message_types<node_actor>()))
              return attempt_failed(self, name, generation,
                                    "its node interface differs (another parley build)");
            auto peer = caf::actor_cast<node_actor>(std::move(ptr));
            // Our node_actor says hello, so the peer learns it as the sender.
            self->request(self->state.endpoint, timeout + std::chrono::seconds(1),
                          link_atom::greet::value, peer)
                .then(
                    [self, name, generation, peer](node_hello& theirs) {
                      peer_greeted_back(self, name, generation, peer, theirs);
                    },
                    [self, name, generation](caf::error& err) {
                      attempt_failed(self, name, generation,
                                     "hello: " + self->system().render(err));
                    });
          },
          [self, name, generation](caf::error& err) {
            auto problem = "connect: " + self->system().render(err);
            if (err == caf::sec::disconnect_during_handshake)
              problem += " (refused during the TLS or BASP handshake: a certificate not signed "
                         "by the cluster CA on one side, another cluster's name, or not a "
                         "parley node)";
            attempt_failed(self, name, generation, problem);
          });
}

void on_down(link_pointer self, const caf::down_msg& dm) {
  for (auto& [name, slot] : self->state.peers) {
    if (!slot.handle || slot.handle.address() != dm.source) continue;
    auto why = self->system().render(dm.reason);
    PARLEY_WARN("cluster event=peer_lost node={} peer={} reason={}", config_of(self).node, name,
                why);
    slot.handle = nullptr;
    slot.failures = 0;
    ++slot.generation;
    tell_watchers(self, name, false, why);
    if (dials(self, name)) schedule_dial(self, name);
    return;
  }
  auto& ws = self->state.watchers;
  ws.erase(std::remove_if(ws.begin(), ws.end(),
                          [&dm](const peer_watcher_actor& w) { return w.address() == dm.source; }),
           ws.end());
}

void listened(link_pointer self, caf::expected<uint16_t> port) {
  for (auto& rp : self->state.waiting_for_port) {
    if (port)
      rp.deliver(*port);
    else
      rp.deliver(port.error());
  }
  self->state.waiting_for_port.clear();
  if (!port) {
    self->state.listen_error = port.error();
    PARLEY_ERROR("cluster event=listen_failed node={} address={}:{} error={}",
                 config_of(self).node, config_of(self).self().host, config_of(self).self().port,
                 self->system().render(port.error()));
    return;
  }
  self->state.port = *port;
  PARLEY_INFO("cluster event=listening node={} address={}:{} tls=on", config_of(self).node,
              config_of(self).self().host, *port);
  for (auto& [name, slot] : self->state.peers)
    if (dials(self, name)) dial(self, name);
}

node_link_actor::behavior_type node_link(link_pointer self, node_link_options options) {
  install_default_handlers(self, "node_link");
  self->set_down_handler([self](caf::down_msg& dm) { on_down(self, dm); });
  auto& st = self->state;
  st.options = std::move(options);
  const auto& cfg = *st.options.config;
  if (st.options.table.empty()) st.options.table = message_table_fingerprint(self->system());
  st.self_hello = node_hello{cfg.cluster, cfg.node, st.options.incarnation, st.options.table};
  for (auto& m : cfg.members)
    if (m.name != cfg.node) st.peers[m.name].address = m;
  node_endpoint_setup setup{st.options.config, st.self_hello, st.options.open_session,
                            st.options.stats, self};
  st.endpoint = self->spawn<caf::linked>(node_endpoint, std::move(setup));
  // Only the configured address, only through the openssl middleman actor
  // (the plain one is never asked to open a port).
  auto mm = self->system().openssl_manager().actor_handle();
  self->request(mm, std::chrono::seconds(10), caf::publish_atom::value, cfg.self().port,
                caf::actor_cast<caf::strong_actor_ptr>(st.endpoint),
                self->system().message_types<node_actor>(), cfg.self().host, true)
      .then([self](uint16_t port) { listened(self, port); },
            [self](caf::error& err) { listened(self, std::move(err)); });
  return {
      [self](link_atom::listen) -> caf::result<uint16_t> {
        if (self->state.port) return *self->state.port;
        if (self->state.listen_error) return self->state.listen_error;
        auto rp = self->make_response_promise<uint16_t>();
        self->state.waiting_for_port.push_back(rp);
        return rp;
      },
      [self](atom::get) {
        peer_map up;
        for (auto& [name, slot] : self->state.peers)
          if (slot.handle) up.emplace(name, slot.handle);
        return up;
      },
      [self](link_atom::watch, peer_watcher_actor& watcher) {
        if (!watcher) return;
        self->monitor(watcher);
        self->state.watchers.push_back(watcher);
        for (auto& [name, slot] : self->state.peers)
          if (slot.handle) self->send(watcher, link_atom::peer_up::value, name, slot.handle);
      },
      [self](link_atom::dial, const std::string& name, uint64_t generation) {
        auto i = self->state.peers.find(name);
        if (i == self->state.peers.end() || i->second.generation != generation) return;
        i->second.dialling = false;  // a timer of an attempt that ended
        dial(self, name);
      },
      [self](link_atom::greeted, const std::string& name, node_actor& peer) {
        // A member that dials us said hello (checked by the endpoint).
        auto i = self->state.peers.find(name);
        if (i == self->state.peers.end() || dials(self, name) || !peer) return;
        auto& slot = i->second;
        if (slot.handle == peer) return;
        if (slot.handle) self->demonitor(caf::actor_cast<caf::actor>(slot.handle));
        slot.handle = std::move(peer);
        slot.last_problem.clear();
        self->monitor(slot.handle);
        PARLEY_INFO("cluster event=peer_up node={} peer={} dialled_by=peer", config_of(self).node,
                    name);
        tell_watchers(self, name, true, {});
      },
  };
}

}  // namespace node_link_impl

node_link_actor spawn_node_link(caf::actor_system& sys, node_link_options options) {
  return sys.spawn(node_link_impl::node_link, std::move(options));
}

}  // namespace parley::cluster
