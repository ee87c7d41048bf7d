#pragma once
// Reads newline-framed input from a file descriptor on a plain thread (not an
// actor: a blocked read must not hold up shutdown) and hands each line to an
// actor as (atom::line, text), then (atom::eof) when the input ends.

#include <atomic>
#include <caf/actor.hpp>
#include <thread>

namespace parley {

class line_reader {
 public:
  /// Lines longer than this are dropped with an error in the log.
  static constexpr size_t max_line_bytes = size_t{64} << 20;

  /// `stop_fd` (optional, e.g. a signalfd): when it becomes readable the
  /// input counts as ended.
  line_reader(int fd, caf::actor sink, int stop_fd = -1);
  ~line_reader();  // stops within ~100 ms even if the input never ends
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;

 private:
  void run();

  int fd_;
  int stop_fd_;
  caf::actor sink_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace parley
