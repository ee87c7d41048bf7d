#pragma once
// A child process speaking a line protocol over pipes: what `parley chat`
// and the benchmark harness use to drive an app-server, and what the tests
// use to drive the real binary.

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace parley {

class child_process {
 public:
  /// Starts argv[0] (searched in PATH) with stdin/stdout as pipes. stderr is
  /// inherited, or sent to `stderr_path` when given.
  explicit child_process(const std::vector<std::string>& argv, const std::string& stderr_path = {});
  ~child_process();  // closes the pipes, kills and reaps the child if needed
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return out_fd_; }

  /// Writes `line` and a newline. False once the child stopped reading.
  bool write_line(const std::string& line);

  /// The next line from the child's stdout; nullopt at EOF or on timeout
  /// (eof() tells which).
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  bool eof() const { return eof_; }

  /// Whether a whole line is already buffered (read_line will not block).
  bool has_buffered_line() const;

  /// Reads whatever is available now into the buffer (non-blocking).
  void pump();

  void close_stdin();

  /// Waits for the child to exit; returns its exit code (128+signal if killed).
  int wait();

  /// Sends a signal to the child.
  void signal(int sig);

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  size_t head_ = 0;  // buffer_[0, head_) is consumed; compacted lazily
  bool eof_ = false;
  std::optional<int> status_;
};

}  // namespace parley
