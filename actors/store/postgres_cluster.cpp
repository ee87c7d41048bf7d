#include "actors/store/postgres_cluster.hpp"

#include "actors/core/log.hpp"

#include "actors/core/cluster_config.hpp"
#include "actors/core/errors.hpp"
#include "actors/store/pg_leases.hpp"

namespace parley::store {

using cluster_self = postgres_store_detail::self_ptr;

namespace postgres_cluster_detail {

using postgres_store_detail::failure;
using postgres_store_detail::run;

cluster_membership& membership(cluster_self self) {
  return *self->state.cluster;
}

/// "host:port" of this node as the cluster file names it.
std::string address_of(const cluster::cluster_config& cfg) {
  for (auto& m : cfg.members)
    if (m.name == cfg.node) return m.host + ":" + std::to_string(m.port);
  return "";
}

caf::error fenced_error(const cluster_membership& c) {
  return make_error(errc::not_owner, "node " + c.node + " (incarnation "
                                         + std::to_string(c.incarnation)
                                         + ") is fenced: its node lease expired or a newer "
                                           "incarnation joined; it writes nothing until it "
                                           "rejoins");
}

/// From now on nothing is written or leased until atom::rejoin.
void become_fenced(cluster_self self, const std::string& why) {
  auto& c = membership(self);
  if (c.fenced) return;
  c.fenced = true;
  PARLEY_WARN("postgres_store event=fenced node={} incarnation={} reason=\"{}\"", c.node,
              c.incarnation, why);
}

/// Runs what waited for the join (`error`: it failed).
void flush_after_join(cluster_self self, const std::string* error) {
  auto waiting = std::move(membership(self).after_join);
  membership(self).after_join.clear();
  for (auto& f : waiting) f(error);
}

/// Registers this node with a new incarnation; `done` gets it (or why not).
void join(cluster_self self, std::function<void(caf::expected<uint64_t>)> done) {
  auto& c = membership(self);
  c.joining = true;
  run(self, {pg::join_node(c.node, c.address, c.ttl.count())},
      [self, done](pg::outcome& o) {
        auto& m = membership(self);
        m.joining = false;
        if (!o.ok || o.results.empty() || o.results[0].rows.empty()) {
          std::string why = "node " + m.node + " cannot join the cluster: "
                            + (o.ok ? "no incarnation" : o.error);
          PARLEY_WARN("postgres_store event=join_failed node={} reason=\"{}\"", m.node, why);
          if (done) done(make_error(errc::internal, why));
          flush_after_join(self, &why);
          return;
        }
        m.incarnation = std::stoull(o.results[0].rows[0].at(0).value_or("0"));
        m.fenced = false;
        m.epochs.clear();  // a new incarnation holds no lease yet
        m.lease_ms_left = m.ttl.count();
        PARLEY_INFO("postgres_store event=joined node={} address={} incarnation={}", m.node,
                    m.address, m.incarnation);
        if (done) done(m.incarnation);
        flush_after_join(self, nullptr);
      },
      true, c.client.get());
}

/// Runs `f` once this node has joined (at once when it has); with the
/// join's error when it could not.
void when_joined(cluster_self self, std::function<void(const std::string*)> f) {
  auto& c = membership(self);
  if (c.incarnation != 0 && !c.joining) {
    f(nullptr);
    return;
  }
  c.after_join.push_back(std::move(f));
  if (!c.joining) join(self, nullptr);
}

/// libpq's "ERROR:  what CONTEXT: ..." as "what".
std::string primary_message(const std::string& error) {
  std::string s = error;
  if (s.rfind("ERROR:", 0) == 0) s.erase(0, 6);
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  if (auto at = s.find(" CONTEXT:"); at != std::string::npos) s.resize(at);
  return s;
}

/// A write the fence refused: logged with the thread and why (the holder);
/// a node the fence calls fenced is.
void note_refusal(cluster_self self, const std::string& thread, const pg::outcome& o) {
  if (o.sqlstate == pg::fenced_state) {
    become_fenced(self, primary_message(o.error));
  } else if (o.sqlstate != pg::not_owner_state) {
    return;
  }
  PARLEY_WARN("postgres_store event=write_refused thread={} reason=\"{}\"", thread,
              primary_message(o.error));
}

}  // namespace postgres_cluster_detail

using namespace postgres_cluster_detail;

void start_cluster(cluster_self self) {
  auto& st = self->state;
  auto& cfg = *st.config->cluster;
  auto c = std::make_unique<cluster_membership>();
  c->node = cfg.node;
  c->address = address_of(cfg);
  c->ttl = std::max(cfg.lease_ttl, std::chrono::milliseconds(30));
  pg::client_options options;
  options.conninfo = st.config->store_url.empty() ? cfg.postgres : st.config->store_url;
  options.max_batch_jobs = 1;
  c->client = std::make_unique<pg::client>(std::move(options));
  st.cluster = std::move(c);
  join(self, nullptr);
  // Urgent: a renewal must not wait behind the threads' traffic in the
  // store's mailbox (under load the lease would lapse and fence the node).
  self->delayed_send<caf::message_priority::high>(self, st.cluster->ttl / 3, pg_renew_atom::value);
}

void run_write(cluster_self self, const std::string& thread, std::vector<pg::statement> statements,
               std::function<void(pg::outcome&)> then, bool durable) {
  if (!self->state.cluster) {
    run(self, std::move(statements), std::move(then), durable);
    return;
  }
  when_joined(self, [self, thread, statements = std::move(statements), then = std::move(then),
                     durable](const std::string* error) mutable {
    auto& c = membership(self);
    if (error) {
      auto o = pg::failed(*error);
      then(o);
      return;
    }
    if (c.fenced) {
      auto o = pg::failed("ERROR:  " + message_of(fenced_error(c)));
      o.sqlstate = pg::fenced_state;
      PARLEY_WARN("postgres_store event=write_refused thread={} reason=\"node {} is fenced\"",
                  thread, c.node);
      then(o);
      return;
    }
    std::optional<uint64_t> epoch;
    if (auto i = c.epochs.find(thread); i != c.epochs.end()) epoch = i->second;
    statements.insert(statements.begin(), pg::fence(thread, c.node, c.incarnation, epoch));
    run(self, std::move(statements),
        [self, thread, then = std::move(then)](pg::outcome& o) {
          if (o.ok && !o.results.empty())
            o.results.erase(o.results.begin());  // the fence's
          else if (!o.ok)
            note_refusal(self, thread, o);
          then(o);
        },
        durable);
  });
}

caf::result<uint64_t> on_lease(cluster_self self, const std::string& thread) {
  if (!self->state.cluster) return uint64_t{0};  // the only node
  auto rp = self->make_response_promise<uint64_t>();
  when_joined(self, [self, thread, rp](const std::string* error) mutable {
    auto& c = membership(self);
    if (error) {
      rp.deliver(make_error(errc::internal, *error));
      return;
    }
    if (c.fenced) {
      rp.deliver(fenced_error(c));
      return;
    }
    // On the store's own connection: after the writes sent before, so a
    // release queued ahead of it lands first.
    auto incarnation = c.incarnation;
    run(self, {pg::take_lease(thread, c.node, incarnation)},
        [self, thread, rp, incarnation](pg::outcome& o) mutable {
          auto& m = membership(self);
          if (!o.ok) {
            if (o.sqlstate == pg::fenced_state) become_fenced(self, primary_message(o.error));
            rp.deliver(failure(o));
            return;
          }
          auto& row = o.results.at(0).rows.at(0);
          if (!row.at(0)) {
            rp.deliver(make_error(errc::not_owner, "thread " + thread + " is owned by node "
                                                       + row.at(1).value_or("?")));
            return;
          }
          uint64_t epoch = std::stoull(*row.at(0));
          if (m.incarnation == incarnation) m.epochs[thread] = epoch;
          PARLEY_DEBUG("postgres_store event=leased thread={} node={} epoch={}", thread, m.node,
                       epoch);
          rp.deliver(epoch);
        });
  });
  return rp;
}

void on_release(cluster_self self, const std::string& thread) {
  if (!self->state.cluster) return;
  auto& c = membership(self);
  c.epochs.erase(thread);
  if (c.incarnation == 0 || c.fenced) return;  // (a fenced node's leases are void already)
  // Behind this thread's writes on the same connection: they land first.
  run(self, {pg::release_lease(thread, c.node, c.incarnation)},
      [thread](pg::outcome& o) {
        if (!o.ok)
          PARLEY_WARN("postgres_store event=release_failed thread={} reason=\"{}\"", thread,
                      o.error);
      },
      false);
}

caf::result<std::string> on_owner(cluster_self self, const std::string& thread) {
  if (!self->state.cluster) return std::string{};
  auto rp = self->make_response_promise<std::string>();
  run(self, {pg::lease_owner(thread)},
      [rp](pg::outcome& o) mutable {
        if (!o.ok) {
          rp.deliver(failure(o));
          return;
        }
        auto& rows = o.results.at(0).rows;
        rp.deliver(rows.empty() ? std::string{} : rows[0].at(0).value_or(""));
      },
      true, membership(self).client.get());
  return rp;
}

caf::result<cluster_view> on_members(cluster_self self) {
  if (!self->state.cluster) return cluster_view{};
  auto rp = self->make_response_promise<cluster_view>();
  run(self, {pg::list_members()},
      [self, rp](pg::outcome& o) mutable {
        if (!o.ok) {
          rp.deliver(failure(o));
          return;
        }
        auto& m = membership(self);
        cluster_view view;
        bool seen_alive = false;
        for (auto& row : o.results.at(0).rows) {
          view.members.push_back(pg::member_of(row));
          auto& member = view.members.back();
          if (member.name == m.node && member.incarnation == m.incarnation && member.alive)
            seen_alive = true;
        }
        // The store says this incarnation's lease is gone: fenced.
        if (m.incarnation != 0 && !m.joining && !seen_alive)
          become_fenced(self, "its node lease expired or a newer incarnation joined");
        view.self_alive = m.incarnation != 0 && !m.fenced && seen_alive;
        view.self_incarnation = m.incarnation;
        rp.deliver(std::move(view));
      },
      true, membership(self).client.get());
  return rp;
}

caf::result<std::vector<orphan_thread>> on_orphans(cluster_self self, const std::string& node) {
  if (!self->state.cluster) return std::vector<orphan_thread>{};
  auto rp = self->make_response_promise<std::vector<orphan_thread>>();
  run(self, {pg::orphaned_threads(node)},
      [rp](pg::outcome& o) mutable {
        if (!o.ok) {
          rp.deliver(failure(o));
          return;
        }
        std::vector<orphan_thread> out;
        for (auto& row : o.results.at(0).rows) out.push_back(pg::orphan_of(row));
        rp.deliver(std::move(out));
      },
      true, membership(self).client.get());
  return rp;
}

caf::result<uint64_t> on_rejoin(cluster_self self) {
  if (!self->state.cluster) return uint64_t{0};
  auto& c = membership(self);
  auto rp = self->make_response_promise<uint64_t>();
  if (c.joining) {  // the first join is under way: its incarnation
    c.after_join.push_back([self, rp](const std::string* error) mutable {
      if (error)
        rp.deliver(make_error(errc::internal, *error));
      else
        rp.deliver(membership(self).incarnation);
    });
  } else if (c.incarnation != 0 && !c.fenced) {
    rp.deliver(c.incarnation);  // not fenced: nothing to rejoin
  } else {
    join(self, [rp](caf::expected<uint64_t> x) mutable {
      if (x)
        rp.deliver(*x);
      else
        rp.deliver(x.error());
    });
  }
  return rp;
}

void on_renew(cluster_self self) {
  auto& c = membership(self);
  self->delayed_send<caf::message_priority::high>(self, c.ttl / 3, pg_renew_atom::value);
  if (c.held || c.renewing || c.joining) return;
  if (c.incarnation == 0) {  // the join failed: again
    join(self, nullptr);
    return;
  }
  if (c.fenced) return;
  c.renewing = true;
  auto incarnation = c.incarnation;
  run(self, {pg::renew_node(c.node, incarnation, c.ttl.count())},
      [self, incarnation](pg::outcome& o) {
        auto& m = membership(self);
        m.renewing = false;
        if (m.incarnation != incarnation) return;  // rejoined meanwhile
        if (!o.ok) {
          // Not reached: the next tick tries again; if the lease lapses
          // meanwhile, the renewal after says so.
          PARLEY_WARN("postgres_store event=renew_failed node={} reason=\"{}\"", m.node, o.error);
          return;
        }
        auto& rows = o.results.at(0).rows;
        if (rows.empty()) {
          become_fenced(self, "its node lease had expired when it was renewed, or a newer "
                              "incarnation joined");
          return;
        }
        m.lease_ms_left = std::stoll(rows[0].at(0).value_or("0"));
      },
      false, c.client.get());
}

void on_hold(cluster_self self, bool held) {
  if (self->state.cluster) membership(self).held = held;
}

}  // namespace parley::store
