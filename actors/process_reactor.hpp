#pragma once
// Runs subprocesses (shell commands, hook programs) without blocking any
// actor: one epoll thread per runtime reads every process's output pipe and
// pidfd and turns them into messages (atom::output chunks, then one
// atom::exited) to the process's sink actor.

#include <caf/expected.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "actors/interfaces.hpp"

namespace parley {

/// What to start. The process always gets a new process group, default
/// signal dispositions and its stdout in a pipe to the reactor.
struct spawn_spec {
  /// argv[0] is looked up in PATH if it contains no '/' (posix_spawnp).
  std::vector<std::string> argv;
  /// Working directory; empty = parley's.
  std::string cwd;
  /// The child's whole stdin, handed over in a memfd (so nobody waits on a
  /// pipe for the child to read); nullopt = /dev/null.
  std::optional<std::string> stdin_data;
  /// true: stderr into the same pipe as stdout. false: stderr stays parley's
  /// stderr (stdout may be a protocol and must not see diagnostics).
  bool merge_stderr = true;
};

class process_reactor {
 public:
  process_reactor();
  ~process_reactor();  // kills what still runs, reaps it, joins the thread
  process_reactor(const process_reactor&) = delete;
  process_reactor& operator=(const process_reactor&) = delete;

  /// Starts `spec.argv` in a new process group; `sink` receives its output
  /// and then exactly one atom::exited. Returns the pid (= the group id).
  caf::expected<int64_t> spawn(const spawn_spec& spec, exec_actor sink);

  /// Starts `/bin/sh -c command` in `cwd`, stdin from /dev/null, stdout and
  /// stderr into one pipe.
  caf::expected<int64_t> spawn(const std::string& command, const std::string& cwd,
                               exec_actor sink);

  /// Kills the command's whole process group (SIGKILL) unless it was reaped.
  void kill(int64_t pid);

  /// Stops the loop: kills every process group still running and reaps them.
  void stop();

 private:
  struct process;
  struct request {
    enum class kind { add, kill } what;
    std::shared_ptr<process> proc;
    int64_t pid = 0;
  };

  void run();
  void wake();
  void drain_commands();
  void on_readable(process& p);
  void on_exit(process& p);
  void finish(process& p);
  void check_deadlines();

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::mutex mtx_;
  std::deque<request> commands_;  // guarded by mtx_
  bool stopping_ = false;         // guarded by mtx_
  std::unordered_map<int64_t, std::shared_ptr<process>> procs_;  // reactor thread only
  std::thread thread_;
};

}  // namespace parley
