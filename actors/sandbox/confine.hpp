#pragma once

// Runs one command confined by a plan: the process structure, the
// namespaces, the capabilities, and the exit status.
//
//   launcher (host namespaces: owns the pids cgroup)
//     └ init: new user, mount, PID (and network) namespaces; sets up the
//       mounts, drops every capability, then reaps until the command exits
//         └ command: rlimits, seccomp, exec

#include <string>

#include "actors/sandbox/sandbox_plan.hpp"

namespace parley::sandbox {

/// Exit status of a launcher whose confinement could not be set up.
inline constexpr int setup_failed = 125;

/// Runs `x.command` under `x` and returns its exit status (128+signal for a
/// signal). In danger-full-access without a process cap, it execs directly
/// and returns only when exec fails. Failures print one line to stderr and
/// return setup_failed.
int run_confined(const plan& x);

/// --check: prints {"filesystem":…,"network":…,"processes":…,"reason":…} and
/// returns 0 when read-only and workspace-write can be fully enforced.
int run_check();

} // namespace parley::sandbox
