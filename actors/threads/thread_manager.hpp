#pragma once
// Thread id -> conversation. Starts conversations, routes requests to them,
// lists what is loaded, and stops them all in an orderly shutdown.

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"
#include "actors/threads/command_exec.hpp"

namespace parley {

struct thread_manager_state {
  static inline const char* name = "thread_manager";
  runtime_services svc;
  /// The same, shared by every conversation it spawns.
  std::shared_ptr<const runtime_services> shared_svc;
  /// command/exec's processes (linked: they die with this manager).
  command_registry_actor commands;
  std::map<std::string, conversation_actor> threads;  // ordered: loaded/list pages by id
  /// A loaded conversation, by its actor's id: its down message finds its
  /// entry in `threads` in one lookup (a scan of `threads` per down message
  /// made an orderly shutdown of n threads take n^2/2 steps).
  struct loaded_actor {
    const std::string* id;  // its key in `threads`
    /// The clients whose requests that may subscribe were routed to it
    /// (usually one): it leaves their entries in `by_client` when it is down.
    std::vector<caf::actor_addr> clients;
  };
  std::unordered_map<caf::actor_id, loaded_actor> by_actor;
  /// The loaded conversations each client may be subscribed to: those its
  /// thread/start, resume, fork, turn/start, shell, compact and review went
  /// to. A client leaving is told to those alone: told to every loaded
  /// thread, 100 connections leaving 100,000 threads were 10 million messages.
  std::unordered_map<caf::actor_addr, std::unordered_set<caf::actor_id>> by_client;
  /// What is kept of each loaded thread besides its actor (issue 22), in
  /// one entry per thread (a map node and a copy of the id less each than
  /// two maps; issue 23, memory per idle loaded thread).
  struct loaded_books {
    std::string tenant;
    /// Its unit of its tenant's (and loading connection's) loaded threads:
    /// released when its conversation is down.
    usage_grant usage;
  };
  std::map<std::string, loaded_books> books;
  std::vector<caf::typed_response_promise<atom::ok>> shutdown_waiters;
  /// Cluster: this node was fenced; answered once every thread is gone.
  std::vector<caf::typed_response_promise<uint64_t>> step_down_waiters;
  uint64_t stepped_down = 0;
  /// Work that waits for a thread that is unloading to be gone (a resume
  /// that came too late to rejoin it loads it again from the store).
  std::multimap<std::string, std::function<void()>> on_unloaded;
  /// Replies this actor still owes (each waits on the store or a thread):
  /// shutdown completes only once they are all delivered.
  size_t owed = 0;
  bool shutting_down = false;
  /// When the conversations still there are killed (set as shutdown begins).
  caf::actor_clock::time_point shutdown_overdue_at;  // the system's clock (tests move it)
  /// Approvals asked before a restart, by their stored deadline (unix ms):
  /// each thread is loaded when its deadline passes, so the approval fails
  /// closed even when nobody comes back for it.
  std::multimap<int64_t, std::string> deadlines;
  /// Threads whose work goes on from the store, waiting for one of the
  /// `max_restoring` loads this actor keeps in flight: CAF 0.17 keeps an
  /// actor's pending requests in a flat table searched and erased linearly,
  /// so n loads asked at once after a crash would cost n^2/2 steps.
  std::deque<std::string> to_restore;
  size_t restoring = 0;
  int64_t deadline_armed_for = 0;  // the deadline the timer is set for (0: none)
};

thread_manager_actor::behavior_type thread_manager(
    thread_manager_actor::stateful_pointer<thread_manager_state> self, runtime_services svc);

/// Resolves a thread's cwd: `requested` if given (relative to the process's
/// cwd), else the configured default, else the process's cwd. Fails unless
/// the result is an existing directory.
caf::expected<std::string> resolve_cwd(const std::optional<std::string>& requested,
                                       const std::string& fallback);

}  // namespace parley
