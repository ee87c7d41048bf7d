#pragma once
// The scheduler's run queue with an express lane (issue 23). A WebSocket
// client's frame wakes its connection actor from the listener's I/O thread,
// which is not one of the scheduler's workers; in a single FIFO that
// connection waited behind every conversation, turn and approval the workers
// had queued (p99 591 ms at load 25), so an answer to an approval waited
// too. Jobs queued from a thread marked express (enqueues_express()) go to
// their own lane, which workers take first; after `burst` express jobs in a
// row while ordinary jobs wait, one ordinary job is taken, so a stream of
// client frames never starves the work already queued.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace parley {

/// Marks (or unmarks) the calling thread: what it wakes joins the express
/// lane of a scheduler running `express_queue`. For I/O threads that carry
/// clients' input; workers and every other thread stay ordinary.
void enqueue_express_from_this_thread(bool express);

/// Whether the calling thread was marked by enqueue_express_from_this_thread.
bool enqueues_express() noexcept;

template <class Job>
class express_queue {
 public:
  /// How many express jobs may be taken in a row while ordinary ones wait.
  static constexpr size_t default_burst = 8;

  explicit express_queue(size_t burst = default_burst) : burst_(burst < 1 ? 1 : burst) {}

  void push(Job job, bool express) {
    {
      std::lock_guard<std::mutex> lock{mtx_};
      (express ? express_ : ordinary_).push_back(std::move(job));
    }
    cv_.notify_one();
  }

  /// The next job, waiting for one if both lanes are empty.
  Job pop() {
    std::unique_lock<std::mutex> lock{mtx_};
    cv_.wait(lock, [this] { return !express_.empty() || !ordinary_.empty(); });
    return take_locked();
  }

  /// Hands every queued job to `f` in the order pop() would, emptying the queue
  /// (the scheduler's shutdown).
  template <class F>
  void drain(F&& f) {
    std::lock_guard<std::mutex> lock{mtx_};
    while (!express_.empty() || !ordinary_.empty()) f(take_locked());
  }

 private:
  Job take_locked() {
    bool express_turn =
        !express_.empty() && (ordinary_.empty() || express_in_a_row_ < burst_);
    auto& lane = express_turn ? express_ : ordinary_;
    express_in_a_row_ = express_turn ? express_in_a_row_ + 1 : 0;
    Job job = std::move(lane.front());
    lane.pop_front();
    return job;
  }

  const size_t burst_;
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<Job> express_;
  std::deque<Job> ordinary_;
  size_t express_in_a_row_ = 0;  // express jobs taken since the last ordinary one
};

}  // namespace parley
