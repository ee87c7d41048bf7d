#include "actors/store/pg_client.hpp"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "actors/store/pg_connection.hpp"

namespace parley::pg {

namespace pg_client_detail {

using clock_type = std::chrono::steady_clock;
constexpr auto first_backoff = std::chrono::milliseconds(100);
constexpr auto max_backoff = std::chrono::milliseconds(2000);

void finish(finished_batch& b) {
  for (size_t i = 0; i < b.jobs.size(); ++i)
    if (b.jobs[i].done) b.jobs[i].done(std::move(b.outcomes[i]));
}

}  // namespace pg_client_detail

using namespace pg_client_detail;

class client::loop {
 public:
  explicit loop(client_options o) : options_(std::move(o)), conn_(options_.conninfo) {
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) throw std::runtime_error("postgres client: eventfd failed");
    thread_ = std::thread([this] { run(); });
  }

  ~loop() {
    stop();
    ::close(wake_fd_);
  }

  void submit(job j) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (!stopping_) {
        incoming_.push_back(std::move(j));
        wake();
        return;
      }
    }
    if (j.done) j.done(failed("the store is stopping"));
  }

  void stop() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (stopping_ && !thread_.joinable()) return;
      stopping_ = true;
    }
    wake();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  struct queued {
    job j;
    bool alone = false;  // run again by itself after its batch failed
  };

  void wake() {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }

  /// Takes what was submitted; false once stopping.
  bool take_incoming() {
    uint64_t n = 0;
    [[maybe_unused]] auto r = ::read(wake_fd_, &n, sizeof n);
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& j : incoming_) queue_.push_back({std::move(j), false});
    incoming_.clear();
    return !stopping_;
  }

  void run() {
    while (true) {
      pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {conn_.socket(), conn_.wanted(), 0}};
      bool watch_conn = fds[1].fd >= 0 && fds[1].events != 0;
      int timeout = -1;
      if (conn_.current() == connection::state::closed && !queue_.empty()) {
        auto wait
            = std::chrono::duration_cast<std::chrono::milliseconds>(retry_at_ - clock_type::now());
        timeout = static_cast<int>(std::max<int64_t>(0, wait.count()));
      }
      ::poll(fds, watch_conn ? 2 : 1, timeout);
      if ((fds[0].revents & POLLIN) && !take_incoming()) break;
      if (watch_conn && fds[1].revents) on_socket(fds[1].revents);
      step();
    }
    shut_down();
  }

  void on_socket(short revents) {
    switch (conn_.current()) {
      case connection::state::connecting:
        conn_.advance_connect();
        if (conn_.current() == connection::state::ready) backoff_ = first_backoff;
        if (conn_.current() == connection::state::closed) connect_failed();
        return;
      case connection::state::ready:
      case connection::state::busy:
        if (auto done = conn_.on_events(revents)) settle(*done);
        if (conn_.current() == connection::state::closed) retry_at_ = clock_type::now();
        return;
      case connection::state::closed:
        return;
    }
  }

  /// What to do next: connect when work waits, or send the next batch.
  void step() {
    if (conn_.current() == connection::state::closed && !queue_.empty()
        && clock_type::now() >= retry_at_) {
      conn_.start();
      if (conn_.current() == connection::state::closed) connect_failed();
    }
    if (conn_.current() != connection::state::ready || queue_.empty()) return;
    std::vector<job> batch;
    bool alone = queue_.front().alone;
    while (!queue_.empty() && batch.size() < options_.max_batch_jobs
           && (batch.empty() || (!alone && !queue_.front().alone))) {
      batch.push_back(std::move(queue_.front().j));
      queue_.pop_front();
      if (alone) break;
    }
    if (auto done = conn_.send(std::move(batch))) {
      settle(*done);
      retry_at_ = clock_type::now();
    }
  }

  /// Delivers a finished batch; a batch of several that failed on a
  /// statement (not the connection) goes again job by job, in order, first.
  void settle(finished_batch& b) {
    bool statement_failed
        = b.jobs.size() > 1
          && std::any_of(b.outcomes.begin(), b.outcomes.end(),
                         [](const outcome& o) { return !o.ok && !o.connection_lost; });
    if (statement_failed) {
      for (size_t i = b.jobs.size(); i-- > 0;) queue_.push_front({std::move(b.jobs[i]), true});
      return;
    }
    finish(b);
  }

  void connect_failed() {
    // Nothing waits forever on a database that is gone: what waits fails,
    // with libpq's reason; the next job tries again after the backoff.
    finished_batch b;
    for (auto& q : queue_) {
      b.jobs.push_back(std::move(q.j));
      b.outcomes.push_back(failed("cannot connect to the database: " + conn_.error(), true));
    }
    queue_.clear();
    finish(b);
    retry_at_ = clock_type::now() + backoff_;
    backoff_ = std::min(backoff_ * 2,
                        std::chrono::duration_cast<std::chrono::milliseconds>(max_backoff));
  }

  void shut_down() {
    if (auto done = conn_.close("the store is stopping")) finish(*done);
    finished_batch b;
    std::deque<job> late;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      for (auto& j : incoming_) late.push_back(std::move(j));
      incoming_.clear();
    }
    for (auto& q : queue_) late.push_back(std::move(q.j));
    queue_.clear();
    for (auto& j : late) {
      b.jobs.push_back(std::move(j));
      b.outcomes.push_back(failed("the store is stopping"));
    }
    finish(b);
  }

  client_options options_;
  std::mutex mtx_;
  std::deque<job> incoming_;  // guarded by mtx_
  bool stopping_ = false;     // guarded by mtx_
  int wake_fd_ = -1;
  // I/O thread only:
  connection conn_;
  std::deque<queued> queue_;
  clock_type::time_point retry_at_ = clock_type::now();
  std::chrono::milliseconds backoff_ = first_backoff;
  std::thread thread_;
};

client::client(client_options options) : loop_(std::make_unique<loop>(std::move(options))) {}

client::~client() {
  stop();
}

void client::submit(job j) {
  loop_->submit(std::move(j));
}

void client::stop() {
  loop_->stop();
}

std::string describe_target(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (!opts) {
    PQfreemem(err);
    return "(unparsable connection string)";
  }
  std::string out;
  for (auto* o = opts; o->keyword; ++o) {
    std::string k = o->keyword;
    if (o->val && *o->val
        && (k == "host" || k == "hostaddr" || k == "port" || k == "dbname" || k == "user")) {
      if (!out.empty()) out += ' ';
      out += k + "=" + o->val;
    }
  }
  PQconninfoFree(opts);
  return out.empty() ? "(libpq defaults)" : out;
}

std::optional<std::string> conninfo_problem(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (!opts) {
    std::string why = err ? err : "it does not parse";
    PQfreemem(err);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return "the store URL cannot be used: " + why;
  }
  bool has_password = false;
  for (auto* o = opts; o->keyword; ++o)
    if (std::string{o->keyword} == "password" && o->val && *o->val) has_password = true;
  PQconninfoFree(opts);
  if (has_password)
    return "the store URL carries a password: give it in PGPASSWORD or a PGPASSFILE, never on "
           "the command line";
  return std::nullopt;
}

}  // namespace parley::pg
