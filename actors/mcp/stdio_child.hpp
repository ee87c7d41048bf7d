#pragma once
// One stdio MCP server's process: started in a process group of its own,
// stdin fed by a writer thread, stdout cut into lines by a reader thread,
// stderr copied to parley's log (bounded). The threads hand what they read
// to the server's actor as messages, tagged with the start's generation so
// a message from an earlier start is told apart; no scheduler thread ever
// blocks on the child's pipes.
//
//   (atom::line, gen, line)     one line of stdout
//   (atom::cut, gen, reason)    stdout broke the framing (a line past the bound)
//   (atom::exited, gen, how)      stdout ended; the process is killed and reaped

#include <sys/types.h>

#include <atomic>
#include <caf/actor.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/mcp/server_link.hpp"

namespace parley::mcp {

struct child_spec {
  std::vector<std::string> argv;
  /// The whole environment ("NAME=value").
  std::vector<std::string> env;
  /// Empty: parley's working directory.
  std::string cwd;
  /// Names the server in the log lines of its stderr.
  std::string name;
};

class stdio_child final : public server_link {
 public:
  /// Starts the process, or returns null with `error` set (e.g. the
  /// command does not exist).
  static std::unique_ptr<stdio_child> start(const child_spec& spec, caf::actor sink,
                                            uint64_t generation, std::string& error);
  /// Kills the process group, stops the threads (promptly: they poll) and
  /// reaps the process.
  ~stdio_child() override;
  stdio_child(const stdio_child&) = delete;
  stdio_child& operator=(const stdio_child&) = delete;

  pid_t pid() const { return pid_; }

  /// Queues `line` and a newline for the child's stdin. False when the
  /// child has fallen too far behind in reading (the caller cuts it off).
  bool send(std::string line) override;

  /// Bytes queued for stdin that a silent server may hold unread.
  static constexpr size_t max_queued_bytes = size_t{64} << 20;

  /// The actor has handled a line of `bytes` (atom::line): it no longer
  /// counts against the bound on what is handed over and not yet handled.
  void consumed(size_t bytes) override;
  std::string describe() const override { return "pid=" + std::to_string(pid_); }

  /// What may be handed to the actor and not yet handled (each line counts
  /// its size and line_overhead): past it the reader stops reading, so a
  /// server that floods valid lines fills its own pipe, not parley's memory.
  static constexpr size_t max_unhandled_bytes = size_t{4} << 20;
  static constexpr size_t line_overhead = 64;

 private:
  stdio_child() = default;
  void write_loop();
  void read_stdout(caf::actor sink, uint64_t generation);
  void read_stderr();

  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string name_;
  std::mutex lock_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  bool stopping_ = false;
  bool reaped_ = false;  // the reader waited for the process (under lock_)
  size_t unhandled_bytes_ = 0;  // handed to the actor, not yet consumed (under lock_)
  std::condition_variable room_;  // unhandled_bytes_ went down, or stopping
  std::shared_ptr<std::atomic<bool>> stop_ = std::make_shared<std::atomic<bool>>(false);
  // Written once at stop: wakes the readers' polls at once, so the
  // destructor (run by the server's actor) joins them without waiting.
  int stop_fd_ = -1;
  std::thread writer_, reader_, errors_;
};

}  // namespace parley::mcp
