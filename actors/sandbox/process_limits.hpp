#pragma once

// Resource limits: rlimits for memory, CPU time and file size, and a pids
// cgroup for the number of processes (RLIMIT_NPROC does not bind root).

#include <string>
#include <sys/types.h>

#include "actors/sandbox/failure.hpp"
#include "actors/sandbox/sandbox_plan.hpp"

namespace parley::sandbox {

/// A pids cgroup made for one command; removed by release().
class pids_cgroup {
public:
  pids_cgroup() = default;
  pids_cgroup(const pids_cgroup&) = delete;
  pids_cgroup& operator=(const pids_cgroup&) = delete;
  ~pids_cgroup();

  /// Creates <own pids cgroup>/parley-sandbox-<pid> with pids.max = max
  /// (cgroup v1 `pids` hierarchy, else the v2 unified one), after removing
  /// the empty leftovers of launchers that are gone.
  outcome create(std::uint64_t max);

  /// Moves `pid` (0: the caller) into the cgroup.
  outcome join(pid_t pid) const;

  /// Removes the cgroup (its processes must be gone).
  void release();

  bool active() const {
    return !dir_.empty();
  }

private:
  std::string dir_;
};

/// Applies RLIMIT_AS, RLIMIT_CPU (hard limit one second above the soft one,
/// so SIGXCPU comes first, then SIGKILL) and RLIMIT_FSIZE; with
/// `nproc_fallback` also RLIMIT_NPROC for max_processes.
outcome apply_rlimits(const limits& x, bool nproc_fallback);

} // namespace parley::sandbox
