#pragma once
// The PostgreSQL client of the store: an I/O thread of its own that owns one
// libpq connection (non-blocking, pipeline mode) and runs the jobs submitted
// to it in order. Jobs queued while a batch runs go out together as the
// next batch: one transaction and one commit (one WAL flush) for all of
// them, which is the store's group commit. A batch that fails is run again
// job by job, so one bad job fails alone. Pure: no actors (the store turns
// each job's `done` into a message to itself).
//
// While the connection is down, queued jobs wait for the next connection
// attempt (100 ms, doubling to 2 s); an attempt that fails fails the jobs
// waiting, with libpq's reason, so nothing waits forever on a database that
// is gone.

#include <memory>
#include <optional>
#include <string>

#include "actors/store/pg_types.hpp"

namespace parley::pg {

struct client_options {
  std::string conninfo;  // a postgresql:// URL or key=value pairs
  size_t max_batch_jobs = 256;
};

class client {
 public:
  explicit client(client_options options);
  ~client();  // stop()
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Queues a job; once stopping, it fails at once (on the caller's thread).
  void submit(job j);
  /// Fails what is queued or in flight ("the store is stopping") and joins.
  void stop();

 private:
  class loop;
  std::unique_ptr<loop> loop_;
};

/// "host=H port=P dbname=D user=U": where a conninfo points, for logs and
/// messages (never a password).
std::string describe_target(const std::string& conninfo);

/// Why a conninfo cannot be used (it does not parse, or carries a
/// password: a password comes from PGPASSWORD or a PGPASSFILE only).
std::optional<std::string> conninfo_problem(const std::string& conninfo);

}  // namespace parley::pg
