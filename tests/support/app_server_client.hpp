#pragma once
// Drives the real `parley app-server` binary over real pipes, the way a
// client would, and keeps every line it printed for later assertions.

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "transport/child_process.hpp"

namespace parley::test {

using json = nlohmann::json;
using namespace std::chrono_literals;

/// Where the binary under test is (set by CMake).
std::string parley_binary();

/// A fresh directory under the test's temp dir.
std::string make_temp_dir(const std::string& name);

bool file_exists(const std::string& path);
/// A whole file's bytes ("" when it cannot be read).
std::string read_file(const std::string& path);
/// Writes `data` to `path`, creating parent directories.
void write_file(const std::string& path, const std::string& data);

class app_server_client {
 public:
  explicit app_server_client(std::vector<std::string> extra_args = {});

  /// Sends a request; returns its id.
  int64_t send(const std::string& method, const json& params);
  void send_raw(const std::string& line);
  /// Sends a request and waits for its response (error or result).
  json call(const std::string& method, const json& params = json::object());
  /// Like call() but fails the test unless the response is a result.
  json call_ok(const std::string& method, const json& params = json::object());

  /// The next message not yet consumed; fails the test on timeout.
  json next(std::chrono::milliseconds timeout = 10s);
  /// The first unconsumed message matching `pred`; earlier ones are skipped
  /// (but stay in log()). Fails the test on timeout.
  json wait_for(const std::function<bool(const json&)>& pred,
                std::chrono::milliseconds timeout = 10s);
  json wait_for_method(const std::string& method, std::chrono::milliseconds timeout = 10s);
  /// Whether a message matching `pred` arrives within `timeout`.
  bool arrives(const std::function<bool(const json&)>& pred, std::chrono::milliseconds timeout);

  void initialize(const json& capabilities = json::object());
  std::string start_thread(const json& params = json::object());
  std::string start_turn(const std::string& thread_id, const std::string& text,
                         const json& extra = json::object());
  void respond(const json& id, const json& result);
  void respond_error(const json& id, int code, const std::string& message);
  void answer(const json& request, const std::string& decision);

  /// Closes the server's stdin and reads everything it prints until it exits.
  int close_and_wait(std::chrono::milliseconds timeout = 30s);

  /// Every message read so far, in order.
  const std::vector<json>& log() const { return log_; }
  /// Every message of one thread (by params.threadId / thread.id).
  std::vector<json> thread_log(const std::string& thread_id) const;
  /// Raw lines that did not parse as JSON objects (must stay empty).
  const std::vector<std::string>& bad_lines() const { return bad_lines_; }

  child_process& process() { return proc_; }

 private:
  bool read_one(std::chrono::milliseconds timeout);

  child_process proc_;
  int64_t next_id_ = 1;
  std::vector<json> log_;
  size_t cursor_ = 0;  // log_[cursor_..] not consumed by next()/wait_for()
  std::vector<bool> consumed_;
  std::vector<std::string> bad_lines_;
};

/// The thread id a message belongs to, or "" for none.
std::string thread_of(const json& m);

/// `method` of a message, or "" for responses.
std::string method_of(const json& m);

/// A response's error message, or "" when it is not an error.
std::string error_message(const json& r);

/// What a run of the binary from a shell command left: its exit code (-1 when
/// it did not exit), its stdout where captured, its stderr.
struct outcome {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

/// `s` in single quotes for /bin/sh.
std::string shell_quoted(const std::string& s);

/// The rollout files under `home`/`sub` (none when the folder is missing).
std::vector<std::string> rollouts(const std::string& home, const std::string& sub = "sessions");

}  // namespace parley::test
