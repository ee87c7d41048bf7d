#pragma once
// One libpq connection driven without blocking: connected with
// PQconnectStart/PQconnectPoll, then in pipeline mode. A batch of jobs is
// sent as one implicit transaction (everything up to the pipeline's sync
// commits together, or nothing does), and its results are read back as the
// socket delivers them. Used by the client's I/O thread only.

#include <memory>
#include <string>
#include <vector>

#include "actors/store/pg_types.hpp"

struct pg_conn;

namespace parley::pg {

/// A batch that finished: its jobs and each job's outcome, in order.
struct finished_batch {
  std::vector<job> jobs;
  std::vector<outcome> outcomes;
};

class connection {
 public:
  enum class state { closed, connecting, ready, busy };

  explicit connection(std::string conninfo);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Starts connecting (closed -> connecting, or closed again with error()).
  void start();
  /// The socket to poll and the events to wait for (connecting, busy).
  int socket() const;
  short wanted() const { return wanted_; }
  state current() const { return state_; }
  /// Why the connection closed, as libpq says it (never a password).
  const std::string& error() const { return error_; }

  /// Advances connecting on socket readiness.
  void advance_connect();
  /// ready -> busy: sends the jobs' statements, one transaction, one sync.
  /// The batch failed at once (closed) when it cannot be sent, else null.
  std::unique_ptr<finished_batch> send(std::vector<job> batch);
  /// busy: reads and writes what the socket allows; the batch once it is
  /// done (ready again), or failed with connection_lost (closed).
  std::unique_ptr<finished_batch> on_events(short revents);
  /// Fails the batch in flight (if any) and closes.
  std::unique_ptr<finished_batch> close(const std::string& why);

 private:
  std::unique_ptr<finished_batch> read_results();
  std::unique_ptr<finished_batch> fail_batch(const std::string& why);
  bool flush();

  std::string conninfo_;
  pg_conn* conn_ = nullptr;
  state state_ = state::closed;
  short wanted_ = 0;
  std::string error_;
  // The batch in flight: its jobs, and where each statement's results go.
  std::vector<job> jobs_;
  std::vector<outcome> outcomes_;
  std::vector<std::pair<size_t, size_t>> slots_;  // statement -> (job, index in job)
  static constexpr size_t no_job = SIZE_MAX;        // the batch's own statement
  size_t next_slot_ = 0;
  std::string first_error_;
  std::string first_sqlstate_;
  size_t failed_job_ = SIZE_MAX;
  // Whether this session's settings (send()) are in place, or on their way
  // in the batch in flight.
  bool session_set_ = false;
  bool setting_session_ = false;
};

}  // namespace parley::pg
