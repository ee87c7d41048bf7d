#pragma once

// Carries a mount_layout out. Runs in the confined command's init process,
// after it entered its new user, mount and PID namespaces (confine.cpp) and
// while it still holds every capability of its user namespace.

#include "actors/sandbox/failure.hpp"
#include "actors/sandbox/mount_plan.hpp"

namespace parley::sandbox {

/// Makes every mount read-only (and nosuid, nodev), builds a minimal /dev,
/// covers what --isolate-reads leaves out, binds the writable roots back
/// read-write, pins the protected names read-only, hides the --hide paths,
/// mounts a fresh /proc (read-only /proc/sys) and re-enters `cwd`.
outcome apply_mounts(const mount_layout& layout, const std::string& cwd);

} // namespace parley::sandbox
