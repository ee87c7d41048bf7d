#pragma once
// cpp-httplib's task queue, one thread per connection, started on demand. cpp-httplib
// serves a connection on one task for as long as it stays open (keep-alive included), so a
// fixed pool of N threads serves N connections and makes the next ones wait, even behind
// idle ones. Here threads start as connections arrive, up to a bound; past it, connections
// wait for a thread to finish.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <httplib.h>
#include <memory>
#include <mutex>

namespace parley::mock_model {

class connection_threads : public httplib::TaskQueue {
 public:
  static constexpr std::chrono::seconds shutdown_grace{2};

  /// What the server reads to decide on keep-alive; shared with every queue it makes.
  struct load {
    std::mutex mutex;
    std::condition_variable idle;
    std::size_t running = 0;
    std::size_t max_threads = 0;
    /// false (--queue-connections=0): with every thread busy the listener stops accepting
    /// until one is free, so new connections wait in the kernel's backlog (--backlog) and
    /// past it their SYNs are dropped, as with a small local model server.
    bool queue_connections = true;
    std::deque<std::function<void()>> waiting;
  };

  explicit connection_threads(std::shared_ptr<load> state) : state_(std::move(state)) {}

  void enqueue(std::function<void()> fn) override;
  /// Waits up to `shutdown_grace` for every connection to finish (cpp-httplib calls it once
  /// the listener closes).
  void shutdown() override;

  /// Connections being served now.
  static std::size_t running(load& state);

 private:
  static void serve(std::shared_ptr<load> state, std::function<void()> fn);

  std::shared_ptr<load> state_;
};

}  // namespace parley::mock_model
