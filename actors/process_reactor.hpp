#pragma once
// Runs shell commands as real subprocesses without blocking any actor: one
// epoll thread per runtime reads every command's output pipe and pidfd and
// turns them into messages (atom::output chunks, then one atom::exited) to
// the command's exec actor.

#include <caf/expected.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "actors/interfaces.hpp"

namespace parley {

class process_reactor {
 public:
  process_reactor();
  ~process_reactor();  // kills what still runs, reaps it, joins the thread
  process_reactor(const process_reactor&) = delete;
  process_reactor& operator=(const process_reactor&) = delete;

  /// Starts `/bin/sh -c command` in `cwd`, in a new process group, stdin from
  /// /dev/null, stdout and stderr into one pipe. Returns the pid.
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
