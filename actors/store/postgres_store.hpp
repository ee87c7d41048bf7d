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

using postgres_store_actor
    = store_actor::extend<caf::reacts_to<pg_done_atom, uint64_t, std::shared_ptr<pg::outcome>>,
                          caf::reacts_to<pg_probe_atom>>;

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
};

postgres_store_actor::behavior_type postgres_store(
    postgres_store_actor::stateful_pointer<postgres_store_state> self,
    std::shared_ptr<const runtime_config> config, std::shared_ptr<runtime_telemetry> telemetry);

}  // namespace parley::store
