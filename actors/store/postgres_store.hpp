#pragma once
// The PostgreSQL store (`--store=postgres --store-url=...`): threads in a
// database several parley processes and their operators can share, behind
// the same store_actor as the local and memory stores.
//
//   postgres_store (this actor)  turns each request into a job of SQL
//                                statements and answers when the job is done
//   pg::client (its own thread)  one libpq connection, non-blocking, in
//                                pipeline mode; runs the jobs in order,
//                                queued ones together in one transaction
//
// No scheduler thread ever waits on the database: a job's end comes back to
// this actor as a message. The schema is in postgres_schema.hpp, the rows and
// statements in postgres_rows.hpp.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/core/config.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/store/pg_client.hpp"
#include "actors/store/postgres_rows.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<parley::pg::outcome>)

namespace parley::store {

/// A job of the store's client has ended (its number, its outcome).
using pg_done_atom = caf::atom_constant<caf::atom("pgdone")>;
/// The store's own timer: is the database back?
using pg_probe_atom = caf::atom_constant<caf::atom("pgprobe")>;
/// The cluster's timer (every lease_ttl / 3): renew this node's lease.
using pg_renew_atom = caf::atom_constant<caf::atom("pgrenew")>;
/// Tests only: hold (true) or resume (false) the renewals, as a node that
/// is paused or cut off from the database would stop renewing.
using pg_hold_atom = caf::atom_constant<caf::atom("pghold")>;

using postgres_store_actor
    = store_actor::extend<caf::reacts_to<pg_done_atom, uint64_t, std::shared_ptr<pg::outcome>>,
                          caf::reacts_to<pg_probe_atom>, caf::reacts_to<pg_renew_atom>,
                          caf::reacts_to<pg_hold_atom, bool>>;

/// A node of a cluster (runtime_config::cluster): its membership in the
/// shared store and the leases it holds (postgres_cluster.hpp).
struct cluster_membership {
  std::string node;
  std::string address;
  std::chrono::milliseconds ttl{4000};
  /// Its own connection: a renewal never waits behind the appends.
  std::unique_ptr<pg::client> client;
  uint64_t incarnation = 0;  // 0 until joined
  bool joining = false;
  bool renewing = false;  // a renewal is in flight
  bool held = false;      // pg_hold_atom
  /// A renewal found its lease expired or its incarnation superseded (or
  /// the fence said so): nothing is written until atom::rejoin.
  bool fenced = false;
  int64_t lease_ms_left = 0;
  /// The epoch of each thread this node leased: its writes carry it.
  std::unordered_map<std::string, uint64_t> epochs;
  /// What waits for the join (nullptr: joined; else why it failed).
  std::vector<std::function<void(const std::string*)>> after_join;
};

struct postgres_store_state {
  static inline const char* name = "postgres_store";
  ~postgres_store_state();
  std::shared_ptr<const runtime_config> config;
  std::unique_ptr<pg::client> client;
  std::shared_ptr<runtime_telemetry> telemetry;
  /// Jobs sent, by number: what to do with their outcome (in this actor),
  /// and their size while they wait.
  struct sent_job {
    std::function<void(pg::outcome&)> then;
    size_t bytes = 0;
  };
  std::unordered_map<uint64_t, sent_job> waiting;
  uint64_t next_job = 0;
  /// What waits for the database, in bytes of SQL and parameters: past
  /// --store-backlog nothing new starts (store_health), past twice that
  /// records are refused, so a slow database costs bounded memory.
  size_t queued_bytes = 0;
  bool behind = false;       // over the backlog: reported to store_health
  bool unreachable = false;  // the connection was lost: reported, probed
  bool probing = false;
  /// Every thread this process created or read: its row and its next line.
  std::unordered_map<std::string, pg::thread_row> threads;
  /// Threads with an append that failed: they take nothing until a record
  /// that opens a turn, which first asks the database where the thread
  /// ends (`resyncing`; the appends that come meanwhile wait, in order).
  struct fault {
    std::string reason;
    bool resyncing = false;
    std::vector<std::pair<store_record, caf::typed_response_promise<atom::ok>>> waiting;
  };
  std::unordered_map<std::string, fault> faults;
  bool sealed = false;
  /// Null: a single process (no leases, no fences).
  std::unique_ptr<cluster_membership> cluster;
};

namespace postgres_store_detail {
using self_ptr = postgres_store_actor::stateful_pointer<postgres_store_state>;
/// Sends `statements` as one job (on the store's client, or `via`); `then`
/// runs in this actor with its outcome. A job that is not `durable` is
/// acknowledged before its commit is flushed.
void run(self_ptr self, std::vector<pg::statement> statements,
         std::function<void(pg::outcome&)> then, bool durable = true, pg::client* via = nullptr);
/// An error of the store for a failed job (errc::not_owner when a fence or
/// a lease refused it).
caf::error failure(const pg::outcome& o);
}  // namespace postgres_store_detail

postgres_store_actor::behavior_type postgres_store(
    postgres_store_actor::stateful_pointer<postgres_store_state> self,
    std::shared_ptr<const runtime_config> config, std::shared_ptr<runtime_telemetry> telemetry);

}  // namespace parley::store
