#include "actors/cluster/node_endpoint.hpp"

#include <caf/typed_event_based_actor.hpp>

#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"

namespace parley::cluster {

std::string hello_problem(const node_hello& theirs, const cluster_config& cluster,
                          const std::string& table, const std::string& expected_node) {
  if (theirs.cluster != cluster.cluster)
    return "cluster \"" + theirs.cluster + "\", not \"" + cluster.cluster + "\"";
  if (!expected_node.empty() && theirs.node != expected_node)
    return "says it is \"" + theirs.node + "\" at the address of \"" + expected_node + "\"";
  bool member = false;
  for (auto& m : cluster.members) member = member || m.name == theirs.node;
  if (!member) return "\"" + theirs.node + "\" is not a member of the cluster file";
  if (theirs.node == cluster.node) return "says it is this node (\"" + cluster.node + "\")";
  if (theirs.table != table)
    return "message table " + theirs.table.substr(0, 16) + "… differs from this node's " +
           table.substr(0, 16) + "… (another parley build: upgrade every node to one version)";
  return {};
}

node_endpoint_actor::behavior_type node_endpoint(node_endpoint_actor::pointer self,
                                                 node_endpoint_setup setup) {
  // Unhandled messages are answered (with an error), never left waiting: a
  // message through the middleman that nobody answers can hang its sender
  // (CAF #1051).
  install_default_handlers(self, "node_endpoint");
  auto s = std::make_shared<node_endpoint_setup>(std::move(setup));
  return {
      [self, s](atom::hello, const node_hello& theirs) -> caf::result<node_hello> {
        auto problem = hello_problem(theirs, *s->config, s->self.table, {});
        if (!problem.empty()) {
          PARLEY_ERROR("cluster event=hello_refused node={} peer={} problem=\"{}\"",
                       s->config->node, theirs.node, problem);
          return caf::make_error(caf::sec::runtime_error,
                                 "node " + s->config->node + " refuses hello: " + problem);
        }
        // The dialler's node_actor is the sender (it says hello itself).
        auto sender = caf::actor_cast<node_actor>(self->current_sender());
        if (sender) self->send(s->link, link_atom::greeted::value, theirs.node, sender);
        return s->self;
      },
      [self, s](link_atom::greet, const node_actor& peer) -> caf::result<node_hello> {
        auto rp = self->make_response_promise<node_hello>();
        self->request(peer, s->config->connection_timeout, atom::hello::value, s->self)
            .then([rp](node_hello& theirs) mutable { rp.deliver(std::move(theirs)); },
                  [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
      [s](atom::open, const session_open& req,
          const session_relay_actor& relay) -> caf::result<remote_session_actor> {
        remote_session_actor session;
        if (s->open_session && relay) session = s->open_session(req, relay);
        if (!session)
          return caf::make_error(caf::sec::runtime_error,
                                 "node " + s->config->node + " opens no session for " + req.label);
        return session;
      },
      [self, s](atom::stats) -> caf::result<std::string> {
        auto rp = self->make_response_promise<std::string>();
        if (s->stats)
          s->stats(rp);
        else
          rp.deliver(caf::make_error(caf::sec::runtime_error, "no stats on this node"));
        return rp;
      },
  };
}

}  // namespace parley::cluster
