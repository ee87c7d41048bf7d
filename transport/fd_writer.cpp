#include "transport/fd_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

#include "actors/core/log.hpp"

namespace parley {

namespace {

// Lines taken into one writev.
constexpr size_t batch_lines = 256;
// How often a writer waiting for a client that does not read looks whether
// it was told to give up.
constexpr int poll_ms = 100;

}  // namespace

fd_writer::fd_writer(int fd, size_t max_bytes, std::shared_ptr<runtime_telemetry> telemetry)
    : fd_(fd), telemetry_(std::move(telemetry)), queue_(max_bytes) {
  thread_ = std::thread([this] { run(); });
}

fd_writer::~fd_writer() { finish(false); }

void fd_writer::set_hooks(hooks h) {
  std::unique_lock<std::mutex> lock{mtx_};
  hooks_ = std::move(h);
  // Under the lock, as every pressure signal (see signal()).
  if (queue_.pressing() && hooks_.on_pressure) hooks_.on_pressure(true);
  bool overflowed = overflowed_;
  auto overflow = hooks_.on_overflow;
  lock.unlock();
  if (overflowed && overflow) overflow();
}

void fd_writer::push(std::string line) {
  std::unique_lock<std::mutex> lock{mtx_};
  if (overflowed_ || stopping_ || broken_.load()) return;
  bool was_empty = queue_.empty();
  if (!enqueue(std::move(line), lock)) return;
  account(lock);
  if (was_empty) cv_.notify_one();
  signal(lock);
}

void fd_writer::push_all(std::vector<std::string>& lines) {
  std::unique_lock<std::mutex> lock{mtx_};
  if (overflowed_ || stopping_ || broken_.load()) {
    lines.clear();
    return;
  }
  bool was_empty = queue_.empty();
  for (auto& line : lines) {
    if (!enqueue(std::move(line), lock)) {
      lines.clear();  // the rest is dropped, as every push after an overflow
      return;
    }
  }
  lines.clear();
  account(lock);
  if (was_empty) cv_.notify_one();
  // The pushes only raise the queue: at most one crossing, told once.
  signal(lock);
}

bool fd_writer::enqueue(std::string line, std::unique_lock<std::mutex>& lock) {
  if (queue_.push(std::move(line))) return true;
  overflowed_ = true;
  PARLEY_WARN("stdio event=slow_client queued_bytes={} max_bytes={} giving up on the client",
              queue_.bytes(), queue_.max_bytes());
  if (telemetry_) telemetry_->limits.count("slow_client");
  auto overflow = hooks_.on_overflow;
  lock.unlock();
  if (overflow) overflow();
  return false;
}

void fd_writer::finish(bool drop) {
  {
    std::lock_guard<std::mutex> lock{mtx_};
    stopping_ = true;
    drop_ = drop_ || drop || overflowed_;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock{mtx_};
  if (telemetry_)
    telemetry_->connections.queued_bytes.fetch_sub(accounted_, std::memory_order_relaxed);
  accounted_ = 0;
}

size_t fd_writer::queued_bytes() const {
  std::lock_guard<std::mutex> lock{mtx_};
  return queue_.bytes();
}

// Under the lock: tells the hooks of a crossing of the marks. Sent before
// the lock is let go: the pusher's crossings (up) and the writer thread's
// (down) are signalled from two threads, and a signal sent after unlocking
// could be overtaken by the other thread's next one: the connection would
// then believe the opposite of the queue's state for good (behind with an
// empty queue: every stream of the client held, nothing left to write that
// could cross the mark again). The hook only sends a message.
void fd_writer::signal(std::unique_lock<std::mutex>&) {
  auto change = queue_.pressure_change();
  if (!change) return;
  PARLEY_DEBUG("stdio event=pressure on={} queued_bytes={}", *change, queue_.bytes());
  if (hooks_.on_pressure) hooks_.on_pressure(*change);
}

void fd_writer::account(std::unique_lock<std::mutex>&) {
  if (!telemetry_) return;
  auto now = static_cast<int64_t>(queue_.bytes());
  telemetry_->connections.queued_bytes.fetch_add(now - accounted_, std::memory_order_relaxed);
  accounted_ = now;
}

void fd_writer::run() {
  std::vector<iovec> iov;
  std::unique_lock<std::mutex> lock{mtx_};
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (drop_ || broken_.load() || (stopping_ && queue_.empty())) break;
    // The lines stay queued (and counted) until written; the pusher only
    // appends, which leaves these references valid.
    iov.clear();
    size_t n = std::min(queue_.size(), batch_lines);
    for (size_t i = 0; i < n; ++i) {
      const auto& line = queue_.at(i);
      size_t skip = i == 0 ? front_offset_ : 0;
      iov.push_back({const_cast<char*>(line.data()) + skip, line.size() - skip});
    }
    lock.unlock();
    // Wait until the client can take something: a client that does not
    // read keeps this thread here, looking every poll_ms whether to give up.
    pollfd p{fd_, POLLOUT, 0};
    int ready = ::poll(&p, 1, poll_ms);
    int error = ready < 0 && errno != EINTR ? errno : 0;
    ssize_t written = 0;
    if (ready > 0) {
      // A pipe with room takes PIPE_BUF bytes without blocking: a client
      // that stops reading mid-batch never holds this thread in writev,
      // so finish() can always stop it.
      size_t budget = PIPE_BUF, k = 0;
      while (k < iov.size() && budget > 0) {
        iov[k].iov_len = std::min(iov[k].iov_len, budget);
        budget -= iov[k++].iov_len;
      }
      written = ::writev(fd_, iov.data(), static_cast<int>(k));
      if (written < 0) error = errno;
    }
    lock.lock();
    if (written < 0 && (error == EINTR || error == EAGAIN)) {
      written = 0;
      error = 0;
    }
    if (error != 0) {
      PARLEY_WARN("line_writer event=write_failed error={} dropped_bytes={}", std::strerror(error),
                  queue_.bytes());
      broken_ = true;
      break;
    }
    // Pop what was written whole; remember how far into the next line.
    auto left = static_cast<size_t>(written);
    while (left > 0) {
      size_t rest = queue_.front().size() - front_offset_;
      if (left < rest) {
        front_offset_ += left;
        break;
      }
      left -= rest;
      front_offset_ = 0;
      queue_.pop();
    }
    account(lock);
    signal(lock);
  }
  // Given up (or the client went away): drop what is left.
  while (!queue_.empty()) queue_.pop();
  front_offset_ = 0;
  account(lock);
}

}  // namespace parley
