#pragma once
// stdio's outgoing queue (issue 22): lines wait in a bounded outgoing_queue
// and a thread of its own writes them to the descriptor. A client that stops
// reading its stdout blocks that thread, never an actor, and what waits for
// it is bounded: past the high-water mark `on_pressure(true)` asks for the
// model streams to pause, below the low-water mark `on_pressure(false)` lets
// them go on; a line that does not fit at all (see outgoing_queue.hpp) makes
// the writer give up on the client: `on_overflow()` once, and every line
// from then on is dropped. The callbacks run on the pushing thread or the
// writing thread, on_pressure under the writer's lock (so its signals keep
// the order of the crossings), and must only send messages.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/core/telemetry.hpp"
#include "transport/outgoing_queue.hpp"

namespace parley {

class fd_writer {
 public:
  struct hooks {
    std::function<void(bool)> on_pressure;
    std::function<void()> on_overflow;
  };

  /// `telemetry` (may be null): where its queued bytes are counted.
  fd_writer(int fd, size_t max_bytes, std::shared_ptr<runtime_telemetry> telemetry);
  /// finish(false) if not done yet.
  ~fd_writer();
  fd_writer(const fd_writer&) = delete;
  fd_writer& operator=(const fd_writer&) = delete;

  /// Who hears the pressure; set once, before or after lines were pushed (a
  /// pressure already on is told at once).
  void set_hooks(hooks h);

  /// Queues one line (its newline included).
  void push(std::string line);
  /// Queues lines in order (each with its newline), under one lock and
  /// with at most one wake-up of the writing thread: a connection hands a
  /// burst at once. `lines` is left empty.
  void push_all(std::vector<std::string>& lines);

  /// Stops the thread once everything queued is written, or at once (the
  /// rest dropped) when `drop` or when the client went away. A client that
  /// never reads again: finish(false) waits for it, as a blocking write would.
  void finish(bool drop);

  size_t queued_bytes() const;
  bool broken() const { return broken_.load(); }

 private:
  void run();
  /// Under the lock: queues one line; false when it overflowed (the lock is
  /// then let go and on_overflow told).
  bool enqueue(std::string line, std::unique_lock<std::mutex>& lock);
  void signal(std::unique_lock<std::mutex>& lock);
  void account(std::unique_lock<std::mutex>& lock);

  int fd_;
  std::shared_ptr<runtime_telemetry> telemetry_;
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  ws::outgoing_queue queue_;  // guarded by mtx_
  size_t front_offset_ = 0;   // bytes of the front line written already (writer thread)
  hooks hooks_;               // guarded by mtx_
  bool stopping_ = false;     // guarded by mtx_
  bool drop_ = false;         // guarded by mtx_
  bool overflowed_ = false;   // guarded by mtx_
  int64_t accounted_ = 0;     // guarded by mtx_: our part of connections.queued_bytes
  std::atomic<bool> broken_{false};
  std::thread thread_;
};

}  // namespace parley
