#include "actors/cluster/thread_router.hpp"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "actors/core/errors.hpp"
#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "protocol/ids.hpp"

namespace parley::cluster {

namespace thread_router_detail {

using self_ptr = thread_router_actor::stateful_pointer<thread_router_state>;

// Requests to the store are urgent (they pass the threads' appends queued in
// its mailbox: a node under load must still see its lease and the members),
// with a caf::duration: request<high>'s chrono overload drops the priority.
const caf::duration store_timeout{std::chrono::seconds(10)};
constexpr auto urgent = caf::message_priority::high;

/// 64-bit FNV-1a, then a finalizer so that close names spread apart.
uint64_t score(const std::string& node, const std::string& thread_id) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(node);
  mix("/");
  mix(thread_id);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

std::vector<std::string> live_nodes(self_ptr self) {
  std::vector<std::string> live{self->state.config->node};
  for (const auto& [name, handle] : self->state.peers) live.push_back(name);
  return live;
}

/// "" for this node, else the name.
std::string relative(self_ptr self, const std::string& node) {
  return node == self->state.config->node ? std::string{} : node;
}

/// The lost nodes whose lease has expired: their threads with an action
/// pending that hashing gives this node are loaded here now.
void take_over(self_ptr self, const std::string& lost) {
  self->request<urgent>(self->state.store, store_timeout, atom::orphans::value, lost)
      .then(
          [self, lost](std::vector<orphan_thread>& orphans) {
            auto live = live_nodes(self);
            std::vector<pending_thread> mine;
            // This node's own earlier incarnation (a restart, a step-down
            // after fencing): every thread of it with work pending comes
            // back here, since nodes that never saw it lost take none of
            // them. Another node's: the share hashing gives this node. (Two
            // nodes loading one thread: the lease lets one.)
            bool own = lost == self->state.config->node;
            for (const auto& o : orphans) {
              if (!o.pending) continue;
              if (!own && rendezvous_owner(o.id, live) != self->state.config->node) continue;
              pending_thread p;
              p.thread_id = o.id;
              p.at = action_record::phase::decided;  // load it now: its turn goes on
              mine.push_back(std::move(p));
            }
            PARLEY_INFO("cluster event=take_over lost={} orphans={} here={}", lost, orphans.size(),
                        mine.size());
            self->state.taken_over += mine.size();
            if (!mine.empty()) self->send(self->state.threads, atom::pending::value, std::move(mine));
          },
          [lost](caf::error& err) {
            PARLEY_WARN("cluster event=orphans_failed lost={} error={}", lost, message_of(err));
          });
}

void look_at_cluster(self_ptr self) {
  self->request<urgent>(self->state.store, store_timeout, atom::members::value)
      .then(
          [self](cluster_view& view) {
            auto& st = self->state;
            if (!view.self_alive && !st.fenced) {
              st.fenced = true;
              PARLEY_ERROR("cluster event=fenced node={}: this node's lease expired; its threads "
                           "may be on other nodes now and it writes nothing for them",
                           st.config->node);
              // Every loaded thread goes (their writes are refused anyway),
              // then the node joins again under a new incarnation.
              self->request(st.threads, std::chrono::seconds(60), atom::rejoin::value)
                  .then(
                      [self](uint64_t) {
                        self->request<urgent>(self->state.store, store_timeout, atom::rejoin::value)
                            .then(
                                [self](uint64_t incarnation) {
                                  self->state.fenced = false;
                                  // What the old incarnation left pending
                                  // is taken over once its leases are void.
                                  self->state.lost.insert(self->state.config->node);
                                  PARLEY_INFO("cluster event=rejoined node={} incarnation={}",
                                              self->state.config->node, incarnation);
                                },
                                [](caf::error& err) {
                                  PARLEY_WARN("cluster event=rejoin_failed error={}",
                                              message_of(err));
                                });
                      },
                      [](caf::error& err) {
                        PARLEY_WARN("cluster event=step_down_failed error={}", message_of(err));
                      });
            }
            for (auto i = st.lost.begin(); i != st.lost.end();) {
              auto m = std::find_if(view.members.begin(), view.members.end(),
                                    [&](const cluster_member& c) { return c.name == *i; });
              bool expired = m == view.members.end() || !m->alive;
              // Our own earlier incarnation (a restart) counts as lost too.
              if (*i == st.config->node) expired = true;
              if (!expired) {
                ++i;
                continue;
              }
              take_over(self, *i);
              i = st.lost.erase(i);
            }
          },
          [](caf::error& err) {
            PARLEY_WARN("cluster event=members_failed error={}", message_of(err));
          });
  self->delayed_send<urgent>(self, self->state.config->lease_ttl / 4, atom::members::value);
}

/// This node's figures: what the router did, the approvals, the live objects.
nlohmann::json node_stats(self_ptr self) {
  auto& st = self->state;
  nlohmann::json peers = nlohmann::json::array();
  for (const auto& [name, h] : st.peers) peers.push_back(name);
  nlohmann::json lost = nlohmann::json::array();
  for (const auto& name : st.lost) lost.push_back(name);
  nlohmann::json out{{"node", st.config->node},    {"reachable", true},
                     {"peers", peers},             {"lost", lost},
                     {"fenced", st.fenced},        {"takenOver", st.taken_over},
                     {"placedHere", st.placed_here}, {"placedElsewhere", st.placed_there}};
  if (st.telemetry) {
    out["approvals"] = st.telemetry->approvals.snapshot();
    auto counts = st.telemetry->counts();
    out["loadedThreads"] = counts.conversations;
    out["runningTurns"] = counts.turns;
    out["pendingApprovals"] = counts.approvals;
  }
  return out;
}

constexpr auto peer_stats_timeout = std::chrono::seconds(3);

/// Asks every linked peer for its figures (a finite timeout each: CAF 0.17
/// may never answer a request to a node that went away, #1466) and answers
/// once all have answered or failed.
caf::result<std::string> gather_cluster_stats(self_ptr self) {
  struct gathering {
    caf::typed_response_promise<std::string> rp;
    std::vector<nlohmann::json> nodes;
    size_t waiting = 0;
    void one_done() {
      if (--waiting == 0) rp.deliver(cluster_stats_of(std::move(nodes)).dump());
    }
  };
  auto g = std::make_shared<gathering>();
  g->rp = self->make_response_promise<std::string>();
  g->nodes.push_back(node_stats(self));
  auto unreachable = [](const std::string& name, const std::string& why) {
    return nlohmann::json{{"node", name}, {"reachable", false}, {"error", why}};
  };
  g->waiting = 1;  // this call's own, released below
  for (const auto& member : self->state.config->members) {
    if (member.name == self->state.config->node) continue;
    auto peer = self->state.peers.find(member.name);
    if (peer == self->state.peers.end()) {
      g->nodes.push_back(unreachable(member.name, "not linked"));
      continue;
    }
    ++g->waiting;
    self->request(peer->second, peer_stats_timeout, atom::stats::value)
        .then(
            [g, unreachable, name = member.name](std::string& text) {
              auto j = nlohmann::json::parse(text, nullptr, false);
              g->nodes.push_back(j.is_object() ? std::move(j)
                                               : unreachable(name, "malformed figures"));
              g->one_done();
            },
            [g, unreachable, name = member.name](caf::error& err) {
              g->nodes.push_back(unreachable(name, message_of(err)));
              g->one_done();
            });
  }
  auto rp = g->rp;
  g->one_done();
  return rp;
}

}  // namespace thread_router_detail

nlohmann::json cluster_stats_of(std::vector<nlohmann::json> nodes) {
  std::sort(nodes.begin(), nodes.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.value("node", "") < b.value("node", "");
  });
  // Counts add up over the members that answered; percentiles do not.
  nlohmann::json totals{{"nodes", nodes.size()}, {"reachable", 0}};
  nlohmann::json approvals = nlohmann::json::object();
  for (const auto& n : nodes) {
    if (!n.value("reachable", false)) continue;
    totals["reachable"] = totals["reachable"].get<int64_t>() + 1;
    for (const char* key : {"loadedThreads", "runningTurns", "pendingApprovals", "takenOver"})
      if (n.contains(key) && n[key].is_number_integer())
        totals[key] = totals.value(key, int64_t{0}) + n[key].get<int64_t>();
    if (!n.contains("approvals") || !n["approvals"].is_object()) continue;
    for (const auto& [key, value] : n["approvals"].items())
      if (value.is_number_integer())
        approvals[key] = approvals.value(key, int64_t{0}) + value.get<int64_t>();
  }
  totals["approvals"] = std::move(approvals);
  return nlohmann::json{{"nodes", std::move(nodes)}, {"totals", std::move(totals)}};
}

std::string rendezvous_owner(const std::string& thread_id, const std::vector<std::string>& live) {
  std::string best;
  uint64_t best_score = 0;
  for (const auto& node : live) {
    auto s = thread_router_detail::score(node, thread_id);
    if (best.empty() || s > best_score || (s == best_score && node < best)) {
      best = node;
      best_score = s;
    }
  }
  return best;
}

thread_router_actor::behavior_type thread_router(
    thread_router_actor::stateful_pointer<thread_router_state> self,
    std::shared_ptr<const cluster_config> config, store_actor store,
    thread_manager_actor threads, std::shared_ptr<runtime_telemetry> telemetry) {
  using namespace thread_router_detail;
  install_default_handlers(self, "thread_router");
  self->state.config = std::move(config);
  self->state.store = std::move(store);
  self->state.threads = std::move(threads);
  self->state.telemetry = std::move(telemetry);
  // What this node held before it restarted goes on here or elsewhere.
  self->state.lost.insert(self->state.config->node);
  self->send(self, atom::members::value);
  return {
      [self](atom::owner, const std::string& thread_id) -> caf::result<std::string> {
        auto rp = self->make_response_promise<std::string>();
        self->request<urgent>(self->state.store, store_timeout, atom::owner::value, thread_id)
            .then(
                [self, rp, thread_id](std::string& holder) mutable {
                  if (holder.empty()) holder = rendezvous_owner(thread_id, live_nodes(self));
                  rp.deliver(relative(self, holder));
                },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
      [self](atom::open) -> caf::result<std::string, std::string> {
        auto id = protocol::new_uuid_v7();
        auto node = relative(self, rendezvous_owner(id, live_nodes(self)));
        ++(node.empty() ? self->state.placed_here : self->state.placed_there);
        return {id, node};
      },
      [self](atom::get, const std::string& name) -> caf::result<node_actor> {
        auto i = self->state.peers.find(name);
        if (i == self->state.peers.end())
          return make_error(errc::overloaded, "node " + name + " of the cluster is unreachable "
                                                  "now; try again");
        return i->second;
      },
      [self](atom::peer_up, const std::string& name, node_actor& peer) {
        PARLEY_INFO("cluster event=peer_up node={}", name);
        self->state.peers[name] = std::move(peer);
        self->state.lost.erase(name);
      },
      [self](atom::peer_lost, const std::string& name, const std::string& why) {
        if (self->state.peers.erase(name) == 0) return;
        PARLEY_WARN("cluster event=peer_lost node={} why=\"{}\": its threads move once its lease "
                    "expires",
                    name, why);
        self->state.lost.insert(name);
      },
      [self](atom::members) { look_at_cluster(self); },
      [self](atom::stats) { return node_stats(self).dump(); },
      [self](atom::stats, atom::members) -> caf::result<std::string> {
        return gather_cluster_stats(self);
      },
  };
}

}  // namespace parley::cluster
