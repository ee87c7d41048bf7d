#pragma once
// Reads a child's stdout on a thread of its own and stamps each line with
// the moment it arrived. The harness handles lines one by one on its main
// thread; without this, every latency it reports would include its own
// backlog (the lines ahead of the one it measures, still to be parsed),
// which under a burst of thousands of threads is larger than the server's.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace parley::bench {

struct stamped_line {
  std::string text;
  std::chrono::steady_clock::time_point arrived;
};

class stamped_reader {
 public:
  /// Starts reading `fd` (not owned) at once.
  explicit stamped_reader(int fd);
  ~stamped_reader();  // stops the thread (it ends at EOF or on stop)
  stamped_reader(const stamped_reader&) = delete;
  stamped_reader& operator=(const stamped_reader&) = delete;

  /// The next line, waiting at most `timeout`; nullopt on timeout or once
  /// the stream ended and every line was taken (eof() tells which).
  std::optional<stamped_line> next(std::chrono::milliseconds timeout);
  bool eof() const;

 private:
  void run();

  int fd_;
  int stop_pipe_[2] = {-1, -1};
  mutable std::mutex mtx_;
  std::condition_variable ready_;
  std::deque<stamped_line> lines_;  // guarded by mtx_
  bool ended_ = false;              // guarded by mtx_
  std::thread thread_;
};

}  // namespace parley::bench
