#include "actors/store/postgres_store.hpp"

#include <chrono>

#include "actors/core/handlers.hpp"
#include "actors/store/durability.hpp"
#include "actors/store/pg_leases.hpp"
#include "actors/store/postgres_cluster.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/rollout_revert.hpp"
#include "protocol/ids.hpp"

namespace parley::store {

namespace postgres_store_detail {

// store_health's sources for this store (the local store's shards are 0..n).
constexpr int backlog_source = 1000;
constexpr int connection_source = 1001;

/// Tells store_health what the backlog and the connection allow now.
void report_health(self_ptr self) {
  auto& st = self->state;
  if (!st.telemetry) return;
  size_t cap = st.config->store_backlog_bytes;
  if (!st.behind && st.queued_bytes > cap) {
    st.behind = true;
    st.telemetry->store.set_fault(
        backlog_source, "the database is behind: " + std::to_string(st.queued_bytes >> 20)
                            + " MiB of records wait for it (--store-backlog)");
  } else if (st.behind && st.queued_bytes <= cap / 2) {
    st.behind = false;
    st.telemetry->store.clear_fault(backlog_source);
  }
}

void run(self_ptr self, std::vector<pg::statement> statements,
         std::function<void(pg::outcome&)> then, bool durable, pg::client* via) {
  auto& st = self->state;
  size_t bytes = 0;
  for (auto& s : statements) {
    bytes += s.sql.size();
    for (auto& p : s.params) bytes += p ? p->size() : 0;
  }
  auto id = ++st.next_job;
  st.waiting.emplace(id, postgres_store_state::sent_job{std::move(then), bytes});
  st.queued_bytes += bytes;
  report_health(self);
  caf::actor_addr me = self->address();  // weak: a queued job does not keep the store alive
  (via ? via : st.client.get())->submit({std::move(statements),
                     [me, id, urgent = via != nullptr](pg::outcome o) {
                       auto h = caf::actor_cast<caf::actor>(me);
                       if (!h) return;
                       auto result = std::make_shared<pg::outcome>(std::move(o));
                       // The cluster's own connection (leases, members,
                       // owners) answers ahead of the threads' traffic.
                       if (urgent)
                         caf::anon_send<caf::message_priority::high>(h, pg_done_atom::value, id,
                                                                     std::move(result));
                       else
                         caf::anon_send(h, pg_done_atom::value, id, std::move(result));
                     },
                     durable});
}

/// A job ended: the backlog shrinks, the connection's state is reported
/// (lost: new work is refused until a probe gets through).
void on_done(self_ptr self, uint64_t id, pg::outcome& o) {
  auto& st = self->state;
  auto i = st.waiting.find(id);
  if (i == st.waiting.end()) return;
  auto job = std::move(i->second);
  st.waiting.erase(i);
  st.queued_bytes -= std::min(st.queued_bytes, job.bytes);
  report_health(self);
  if (!o.ok && o.connection_lost && !st.unreachable) {
    st.unreachable = true;
    PARLEY_WARN("postgres_store event=unreachable reason=\"{}\"", o.error);
    if (st.telemetry)
      st.telemetry->store.set_fault(connection_source, "the database cannot be reached: " + o.error);
    if (!st.probing) {
      st.probing = true;
      self->delayed_send(self, std::chrono::milliseconds(500), pg_probe_atom::value);
    }
  } else if (o.ok && st.unreachable) {
    st.unreachable = false;
    PARLEY_INFO("postgres_store event=reachable");
    if (st.telemetry) st.telemetry->store.clear_fault(connection_source);
  }
  job.then(o);
}

/// While the database cannot be reached, a query now and then: its success
/// (on_done) lets new work start again.
void on_probe(self_ptr self) {
  auto& st = self->state;
  if (!st.unreachable || st.sealed) {
    st.probing = false;
    return;
  }
  run(self, {pg::statement{"SELECT 1", {}}}, [](pg::outcome&) {});
  self->delayed_send(self, std::chrono::milliseconds(500), pg_probe_atom::value);
}

caf::error failure(const pg::outcome& o) {
  // Refused by a fence or a lease (pg_leases.hpp): the server's own words.
  if (o.sqlstate == pg::not_owner_state || o.sqlstate == pg::fenced_state) {
    std::string what = o.error;
    if (what.rfind("ERROR:", 0) == 0) what.erase(0, what.find_first_not_of(' ', 6));
    if (auto at = what.find(" CONTEXT:"); at != std::string::npos) what.resize(at);
    return make_error(errc::not_owner, "not stored: " + what);
  }
  return make_error(errc::internal, "the store could not do it: " + o.error);
}

caf::error not_found(const std::string& id) {
  return make_error(errc::invalid_request, "no rollout found for thread id " + id);
}

/// The lines of select_lines' result, and the seq after the last.
std::vector<std::string> lines_of(const pg::result& r, int64_t& next_seq) {
  std::vector<std::string> lines;
  lines.reserve(r.rows.size());
  next_seq = 0;
  for (auto& row : r.rows) {
    next_seq = std::stoll(row.at(0).value_or("0")) + 1;
    lines.push_back(row.at(1).value_or(""));
  }
  return lines;
}

/// Decodes a thread's lines as the rollout they are; remembers the thread
/// (unless this process already follows it: its row is ahead of any read).
caf::expected<stored_thread> decode(self_ptr self, const std::string& id, bool archived,
                                    const pg::result& lines_result) {
  int64_t next_seq = 0;
  auto lines = lines_of(lines_result, next_seq);
  auto t = decode_rollout(lines, "postgres thread " + id);
  if (!t) return t.error();
  t->archived = archived;
  t->meta.path.reset();
  auto& known = self->state.threads;
  if (auto i = known.find(id); i == known.end())
    known.emplace(id, pg::row_of(*t, next_seq));
  else
    i->second.archived = archived;
  return t;
}

// -- the store's handlers --------------------------------------------------------

void append_now(self_ptr self, const std::string& id, const store_record& record,
                caf::typed_response_promise<atom::ok> rp);

/// Asks the database where thread `id` ends, then writes what waited.
void resync(self_ptr self, const std::string& id) {
  self->state.faults[id].resyncing = true;
  run(self, {pg::next_line(id)}, [self, id](pg::outcome& o) mutable {
    auto& st = self->state;
    auto f = st.faults.find(id);
    if (f == st.faults.end()) return;
    auto waiting = std::move(f->second.waiting);
    f->second.waiting.clear();
    f->second.resyncing = false;
    auto row = st.threads.find(id);
    if (!o.ok || o.results.empty() || o.results[0].rows.empty() || row == st.threads.end()) {
      // Still cut off: what waited fails; the next turn tries again.
      f->second.reason = o.ok ? "the thread is gone" : o.error;
      for (auto& w : waiting)
        w.second.deliver(make_error(errc::internal, "the store could not do it: " + f->second.reason));
      return;
    }
    row->second.next_seq = std::stoll(o.results[0].rows[0].at(0).value_or("0"));
    st.faults.erase(f);
    PARLEY_INFO("postgres_store event=resumed thread={} next_line={}", id, row->second.next_seq);
    for (auto& w : waiting) append_now(self, id, w.first, std::move(w.second));
  });
}

caf::result<atom::ok> on_append(self_ptr self, const std::string& id, const store_record& record) {
  auto& st = self->state;
  if (st.sealed)
    return make_error(errc::internal, "the server is stopping: nothing more is stored");
  // A new thread while the store cannot write is refused now, rather than
  // accepted and lost (a turn is refused by its conversation).
  if (std::holds_alternative<thread_created_record>(record) && st.telemetry
      && !st.telemetry->store.writable())
    return st.telemetry->store.refusal();
  if (st.queued_bytes > 2 * st.config->store_backlog_bytes) {
    // Memory stays bounded; the thread takes nothing more of this turn.
    std::string why = "the database is behind (" + std::to_string(st.queued_bytes >> 20)
                      + " MiB of records wait for it)";
    auto f = st.faults.find(id);
    bool waits_for_resync = f != st.faults.end() && f->second.resyncing;
    if (!waits_for_resync) {  // (one that waits is written after the resync, in order)
      if (!std::holds_alternative<thread_created_record>(record) && f == st.faults.end())
        st.faults[id].reason = why;
      return make_error(errc::internal, "not stored: " + why);
    }
  }
  auto rp = self->make_response_promise<atom::ok>();
  if (auto f = st.faults.find(id); f != st.faults.end()) {
    bool opens = std::holds_alternative<thread_created_record>(record)
                 || std::holds_alternative<turn_started_record>(record);
    if (f->second.resyncing) {
      f->second.waiting.emplace_back(record, rp);
    } else if (!opens) {
      // Nothing after a hole: the turn that lost a record keeps no more.
      rp.deliver(make_error(errc::internal, "not stored: an earlier record of thread " + id
                                                + " was not stored (" + f->second.reason + ")"));
    } else {
      f->second.waiting.emplace_back(record, rp);
      resync(self, id);
    }
    return rp;
  }
  append_now(self, id, record, rp);
  return rp;
}

void append_now(self_ptr self, const std::string& id, const store_record& record,
                caf::typed_response_promise<atom::ok> rp) {
  auto& st = self->state;
  std::vector<pg::statement> statements;
  if (auto* created = std::get_if<thread_created_record>(&record)) {
    auto row = pg::row_of(created->meta);
    // A fork's copied turns are written with it, from the full metadata.
    auto lines = encode_thread(created->meta, created->context);
    statements.push_back(pg::insert_thread(row));
    statements.push_back(pg::append_lines(id, 0, lines));
    row.next_seq = static_cast<int64_t>(lines.size());
    st.threads[id] = std::move(row);
  } else {
    auto i = st.threads.find(id);
    if (i == st.threads.end()) {
      rp.deliver(make_error(errc::internal, "store: append to an unknown thread " + id));
      return;
    }
    auto& row = i->second;
    line_stamp stamp{protocol::unix_ms()};
    auto lines = encode_record(row.meta, record, stamp);
    bool changed = pg::fold(row, record);
    // The row's updated_at is the one a reader computes from the lines.
    if (stamp.dated && row.meta.updated_at < stamp.at_ms / 1000) {
      row.meta.updated_at = stamp.at_ms / 1000;
      changed = true;
    }
    if (!lines.empty()) {
      statements.push_back(pg::append_lines(id, row.next_seq, lines));
      row.next_seq += static_cast<int64_t>(lines.size());
    }
    if (changed) statements.push_back(pg::update_thread(row));
  }
  if (statements.empty()) {
    rp.deliver(atom::ok::value);
    return;
  }
  bool durable = must_sync(*st.config, record);
  auto arrived = std::chrono::steady_clock::now();
  run_write(self, id, std::move(statements), [self, id, rp, durable, arrived](pg::outcome& o) mutable {
    // A durable write's latency: its arrival here to its commit.
    if (durable && self->state.telemetry)
      self->state.telemetry->store_writes.answered(arrived, o.ok);
    if (o.ok) {
      rp.deliver(atom::ok::value);
      return;
    }
    // The appends of this thread sent after this one fail in the database
    // (they do not follow its last line); later ones wait for a new turn.
    auto& f = self->state.faults[id];
    if (f.reason.empty()) {
      f.reason = o.error;
      PARLEY_WARN("postgres_store event=append_failed thread={} reason=\"{}\"", id, o.error);
    }
    rp.deliver(failure(o));
  }, durable);
}

caf::result<stored_thread> on_load(self_ptr self, const std::string& id) {
  auto rp = self->make_response_promise<stored_thread>();
  run(self, {pg::select_thread(id), pg::select_lines(id)}, [self, rp, id](pg::outcome& o) mutable {
    if (!o.ok) {
      rp.deliver(failure(o));
      return;
    }
    if (o.results[0].rows.empty()) {
      rp.deliver(not_found(id));
      return;
    }
    bool archived = o.results[0].rows[0].at(0) == std::optional<std::string>{"t"};
    auto t = decode(self, id, archived, o.results[1]);
    if (!t) {
      rp.deliver(t.error());
      return;
    }
    rp.deliver(std::move(*t));
  });
  return rp;
}

caf::result<std::string> on_tenant(self_ptr self, const std::string& id) {
  // A thread's tenant never changes: a row this node holds says it.
  if (auto i = self->state.threads.find(id); i != self->state.threads.end())
    return i->second.meta.tenant;
  auto rp = self->make_response_promise<std::string>();
  run(self, {pg::select_tenant(id)}, [rp, id](pg::outcome& o) mutable {
    if (!o.ok)
      rp.deliver(failure(o));
    else if (o.results[0].rows.empty())
      rp.deliver(not_found(id));
    else
      rp.deliver(o.results[0].rows[0].at(0).value_or(std::string{}));
  });
  return rp;
}

caf::result<protocol::thread_list_response> on_list(self_ptr self,
                                                    const protocol::thread_list_params& params) {
  auto rp = self->make_response_promise<protocol::thread_list_response>();
  run(self, {pg::list_threads(params)}, [rp, params](pg::outcome& o) mutable {
    if (!o.ok) {
      rp.deliver(failure(o));
      return;
    }
    uint32_t limit = params.limit && *params.limit > 0 ? *params.limit : 25;
    protocol::thread_list_response r;
    for (auto& row : o.results[0].rows) {
      if (r.data.size() == limit) {
        r.next_cursor = pg::cursor_after(r.data.back(), params);
        break;
      }
      r.data.push_back(pg::listed_thread(row));
    }
    rp.deliver(std::move(r));
  });
  return rp;
}

caf::result<stored_thread> on_archive(self_ptr self, const std::string& id, bool archive) {
  auto rp = self->make_response_promise<stored_thread>();
  run_write(self, id,
            {pg::select_thread(id, true), pg::set_archived(id, archive), pg::select_lines(id)},
      [self, rp, id, archive](pg::outcome& o) mutable {
        if (!o.ok) {
          rp.deliver(failure(o));
          return;
        }
        auto& found = o.results[0].rows;
        if (found.empty() || found[0].at(1) != std::optional<std::string>{"t"}) {
          rp.deliver(not_found(id));
          return;
        }
        if (o.results[1].affected == 0)  // Codex: nothing to move is an error
        {
          rp.deliver(archive ? not_found(id)
                             : make_error(errc::invalid_request,
                                          "no archived rollout found for thread id " + id));
          return;
        }
        auto t = decode(self, id, archive, o.results[2]);
        if (!t) {
          rp.deliver(t.error());
          return;
        }
        rp.deliver(std::move(*t));
      });
  return rp;
}

/// thread/delete: the row and its lines go in one transaction.
caf::result<atom::ok> on_erase(self_ptr self, const std::string& id) {
  auto& st = self->state;
  if (st.sealed)
    return make_error(errc::internal, "the server is stopping: nothing more is stored");
  // Forgotten now: an append that comes later is refused (unknown thread)
  // instead of writing to a row that is gone.
  st.threads.erase(id);
  auto rp = self->make_response_promise<atom::ok>();
  run_write(self, id, {pg::delete_thread(id)}, [rp, id](pg::outcome& o) mutable {
    if (!o.ok)
      rp.deliver(failure(o));
    else if (o.results[0].affected == 0)
      rp.deliver(not_found(id));
    else
      rp.deliver(atom::ok::value);
  });
  return rp;
}

/// thread/revert: the thread's lines read, the kept ones computed as the
/// local store computes them (rollout_revert.hpp), and written back in one
/// transaction (the old lines deleted, the kept ones appended, the row
/// updated): the database holds one history or the other, never a mix.
caf::result<stored_thread> on_revert(self_ptr self, const std::string& id,
                                     const std::string& turn_id) {
  auto& st = self->state;
  if (st.sealed)
    return make_error(errc::internal, "the server is stopping: nothing more is stored");
  auto rp = self->make_response_promise<stored_thread>();
  run(self, {pg::select_thread(id), pg::select_lines(id)},
      [self, rp, id, turn_id](pg::outcome& o) mutable {
        if (!o.ok) {
          rp.deliver(failure(o));
          return;
        }
        if (o.results[0].rows.empty()) {
          rp.deliver(not_found(id));
          return;
        }
        bool archived = o.results[0].rows[0].at(0) == std::optional<std::string>{"t"};
        int64_t next_seq = 0;
        auto kept = reverted_lines(lines_of(o.results[1], next_seq), turn_id);
        if (!kept) {
          rp.deliver(kept.error());
          return;
        }
        auto t = decode_rollout(*kept, "postgres thread " + id);
        if (!t) {
          rp.deliver(t.error());
          return;
        }
        t->archived = archived;
        t->meta.path.reset();
        t->meta.updated_at = std::max(t->meta.updated_at, protocol::unix_seconds());
        auto row = pg::row_of(*t, static_cast<int64_t>(kept->size()));
        row.archived = archived;
        row.listed = true;  // it had the turn it goes back before
        std::vector<pg::statement> write{pg::delete_lines(id), pg::append_lines(id, 0, *kept),
                                         pg::update_thread(row)};
        run_write(self, id, std::move(write),
                  [self, rp, id, row, t = std::move(*t)](pg::outcome& w) mutable {
          if (!w.ok) {
            rp.deliver(failure(w));
            return;
          }
          self->state.threads[id] = row;
          self->state.faults.erase(id);
          rp.deliver(std::move(t));
        });
      });
  return rp;
}

caf::result<std::vector<pending_thread>> on_pending(self_ptr self) {
  auto rp = self->make_response_promise<std::vector<pending_thread>>();
  run(self, {pg::pending_threads()}, [rp](pg::outcome& o) mutable {
    if (!o.ok) {
      rp.deliver(failure(o));
      return;
    }
    std::vector<pending_thread> out;
    for (auto& row : o.results[0].rows) {
      int phase = std::stoi(row.at(1).value_or("0"));
      if (phase < 1 || phase > 3) continue;
      out.push_back({row.at(0).value_or(""), static_cast<action_record::phase>(phase - 1),
                     std::stoll(row.at(2).value_or("0"))});
    }
    rp.deliver(std::move(out));
  });
  return rp;
}

/// Refuses later appends; answers once every job sent before has ended (the
/// client runs them in order: an empty job behind them ends last).
caf::result<atom::ok> on_seal(self_ptr self) {
  self->state.sealed = true;
  auto rp = self->make_response_promise<atom::ok>();
  run(self, {}, [rp](pg::outcome&) mutable { rp.deliver(atom::ok::value); });
  return rp;
}

}  // namespace postgres_store_detail

using namespace postgres_store_detail;

postgres_store_state::~postgres_store_state() {
  // Fails what is still queued (nobody waits for it any more) and joins the
  // client's thread, which leaves its poll at once.
  if (client) client->stop();
  if (cluster && cluster->client) cluster->client->stop();
}

postgres_store_actor::behavior_type postgres_store(
    postgres_store_actor::stateful_pointer<postgres_store_state> self,
    std::shared_ptr<const runtime_config> config, std::shared_ptr<runtime_telemetry> telemetry) {
  install_default_handlers(self, "postgres_store");
  auto& st = self->state;
  st.config = std::move(config);
  st.telemetry = std::move(telemetry);
  pg::client_options options;
  options.conninfo = st.config->store_url;
  st.client = std::make_unique<pg::client>(std::move(options));
  PARLEY_INFO("postgres_store event=started target={}", pg::describe_target(st.config->store_url));
  if (st.config->cluster) start_cluster(self);
  return {
      [self](atom::append, const std::string& id, const store_record& record)
          -> caf::result<atom::ok> { return on_append(self, id, record); },
      [self](atom::load, const std::string& id) -> caf::result<stored_thread> {
        return on_load(self, id);
      },
      [self](atom::tenant, const std::string& id) { return on_tenant(self, id); },
      [](atom::load, const rollout_path& p) -> caf::result<stored_thread> {
        // Explicit rollout files are read from disk whatever the store
        // (validated first), as the memory store reads them.
        return read_rollout(p.path);
      },
      [self](atom::list, const protocol::thread_list_params& params)
          -> caf::result<protocol::thread_list_response> { return on_list(self, params); },
      [self](atom::archive, const std::string& id, bool archive) -> caf::result<stored_thread> {
        return on_archive(self, id, archive);
      },
      [self](atom::erase, const std::string& id) { return on_erase(self, id); },
      [self](atom::revert, const std::string& id, const std::string& turn_id) {
        return on_revert(self, id, turn_id);
      },
      [self](atom::pending) { return on_pending(self); },
      [self](atom::seal) { return on_seal(self); },
      // A cluster's node (postgres_cluster.hpp); a single process answers
      // as the only node.
      [self](atom::lease, const std::string& id) { return on_lease(self, id); },
      [self](atom::release, const std::string& id) { on_release(self, id); },
      [self](atom::owner, const std::string& id) { return on_owner(self, id); },
      [self](atom::members) { return on_members(self); },
      [self](atom::orphans, const std::string& node) { return on_orphans(self, node); },
      [self](atom::rejoin) { return on_rejoin(self); },
      [self](pg_done_atom, uint64_t id, std::shared_ptr<pg::outcome>& o) { on_done(self, id, *o); },
      [self](pg_probe_atom) { on_probe(self); },
      [self](pg_renew_atom) { on_renew(self); },
      [self](pg_hold_atom, bool held) { on_hold(self, held); },
  };
}

}  // namespace parley::store
