#pragma once
// Runs subprocesses (shell commands, hook programs) without blocking any
// actor: spawner threads of the runtime's own create the processes
// (posix_spawn waits for the child's exec: on the scheduler's workers,
// thousands of starts would delay every other actor, e.g. approval
// decisions; one per core, since one alone halves the start rate), and one epoll
// thread reads every process's output pipe and pidfd and turns them into
// messages (atom::output chunks, then one atom::exited) to the sink actor.

#include <caf/expected.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/core/interfaces.hpp"

namespace parley {

class runtime_telemetry;

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
  /// The child's whole environment ("NAME=value"); null = parley's own.
  std::shared_ptr<const std::vector<std::string>> env;
  /// stderr into a pipe of its own (overrides merge_stderr): its chunks
  /// reach the sink as atom::err_output (command/exec keeps them apart).
  bool separate_stderr = false;
  /// stdin from a pipe that write_stdin feeds (overrides stdin_data).
  bool stdin_pipe = false;
  /// A pseudo-terminal of this size (rows, cols): stdin, stdout and stderr
  /// are its slave, the process leads a new session with it as controlling
  /// terminal; write_stdin types into it, resize changes its size.
  std::optional<std::pair<uint16_t, uint16_t>> pty;
};

/// Names one spawn request for its whole life (never reused, unlike pids).
using process_id = uint64_t;

struct process_reactor_options {
  /// Called on the spawner thread just before each process is created; lets
  /// tests hold a start in flight. Empty in production.
  std::function<void()> before_spawn;
  /// Threads that create processes; 0 = one per core.
  unsigned spawners = 0;
  /// Where live processes are counted (the runtime's); null: not counted.
  std::shared_ptr<runtime_telemetry> telemetry;
};

class process_reactor {
 public:
  explicit process_reactor(process_reactor_options options = {});
  ~process_reactor();  // kills what still runs, reaps it, joins the threads
  process_reactor(const process_reactor&) = delete;
  process_reactor& operator=(const process_reactor&) = delete;

  /// Queues `spec.argv` to start in a new process group and returns at once.
  /// `sink` receives its output and then exactly one atom::exited; if it
  /// never started (cannot start, killed while queued, stop) that exit says
  /// why in `not_started` and no output comes before it.
  process_id spawn(spawn_spec spec, process_sink_actor sink);

  /// `/bin/sh -c command` in `cwd`, stdin from /dev/null, stdout and stderr
  /// into one pipe, with `env` as its environment (null: parley's own).
  process_id spawn(const std::string& command, const std::string& cwd, process_sink_actor sink,
                   std::shared_ptr<const std::vector<std::string>> env = nullptr);

  /// Kills the process's whole group (SIGKILL) unless it was reaped; a start
  /// still queued never happens, one in progress is killed as it returns.
  void kill(process_id id);

  /// Writes `data` to the process's stdin (a pipe or its terminal), without
  /// blocking anyone: what the child does not take yet waits in the
  /// reactor. `close`: then closes stdin (a terminal gets ^D). Ignored once
  /// stdin is closed or the process reaped.
  void write_stdin(process_id id, std::string data, bool close);

  /// Sets the terminal size of a pty process (TIOCSWINSZ: it gets SIGWINCH).
  void resize(process_id id, uint16_t rows, uint16_t cols);

  /// Stops both threads: queued starts never happen (their sinks hear so),
  /// every process group still running is killed and reaped.
  void stop();

 private:
  struct process;
  struct queued_spawn {
    process_id id = 0;
    spawn_spec spec;
    process_sink_actor sink;
  };
  struct request {
    enum class kind { add, kill, write, resize };
    request(kind k, std::shared_ptr<process> p, process_id i)
        : what(k), proc(std::move(p)), id(i) {}
    kind what;
    std::shared_ptr<process> proc;
    process_id id = 0;
    std::string data;    // write
    bool close = false;  // write
    uint16_t rows = 0, cols = 0;  // resize
  };

  void spawn_loop();
  bool take_next(queued_spawn& next);
  void start_one(queued_spawn& q);
  void run();
  void wake();
  void drain_commands();
  bool still_starting(process_id id);
  void on_readable(process& p, bool is_stderr);
  void flush_stdin(process& p);
  void close_stdin(process& p);
  void on_exit(process& p);
  void finish(process& p);
  void check_deadlines();

  process_reactor_options options_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::mutex mtx_;
  std::deque<request> commands_;  // guarded by mtx_
  bool stopping_ = false;         // guarded by mtx_: no more starts
  bool loop_stopping_ = false;    // guarded by mtx_: the epoll thread ends
  std::deque<queued_spawn> spawns_;            // guarded by mtx_
  std::unordered_set<process_id> queued_ids_;  // guarded by mtx_: in spawns_
  std::unordered_set<process_id> cancelled_;   // guarded by mtx_: killed before started
  std::unordered_set<process_id> starting_;    // guarded by mtx_: being created now
  process_id next_id_ = 1;                     // guarded by mtx_
  std::condition_variable spawn_cv_;
  std::unordered_map<process_id, std::shared_ptr<process>> procs_;  // reactor thread only
  std::deque<request> deferred_;  // reactor thread only: for processes still starting
  std::thread thread_;
  std::vector<std::thread> spawners_;
};

}  // namespace parley
