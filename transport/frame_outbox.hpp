#pragma once
// The lines a WebSocket connection has handed to its I/O thread and that
// thread has not taken yet (issue 23). The connection's actor puts each line
// as it writes it; the I/O thread takes them all at once. A burst of lines
// costs one posted handler, one wake-up of the I/O thread, instead of one for
// each, and no writer actor waits on the scheduler's queues between a
// decision and its `serverRequest/resolved`. Order is kept: lines are taken
// in the order they were put, and a drain posted for the first of a burst
// takes everything put before it runs.

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace parley::ws {

class frame_outbox {
 public:
  /// A line and the credit it carries (a model stream's, given back once the
  /// line is queued for its client; null for most).
  using entry = std::pair<std::string, std::shared_ptr<const void>>;

  /// True when the box was empty: the caller must post a drain (one that
  /// calls take()); otherwise one is already on its way and takes this too.
  [[nodiscard]] bool put(std::string line, std::shared_ptr<const void> credit) {
    std::lock_guard<std::mutex> lock{mtx_};
    lines_.emplace_back(std::move(line), std::move(credit));
    return lines_.size() == 1;
  }

  /// Everything put since the last take, oldest first; the box is empty after.
  std::vector<entry> take() {
    std::vector<entry> all;
    std::lock_guard<std::mutex> lock{mtx_};
    all.swap(lines_);
    return all;
  }

 private:
  std::mutex mtx_;
  std::vector<entry> lines_;
};

}  // namespace parley::ws
