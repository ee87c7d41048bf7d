#pragma once

// Which mounts a confined command gets, decided from the plan and from what
// exists on disk (asked through a probe, so this stays pure and testable).
// mount_apply.hpp carries the layout out inside the new mount namespace.

#include <functional>
#include <string>
#include <vector>

#include "actors/sandbox/sandbox_plan.hpp"

namespace parley::sandbox {

/// What a path names, as lstat(2) sees it.
enum class entry_kind { missing, directory, symlink, other };

/// Answers lstat(2) for a path.
using probe_function = std::function<entry_kind(const std::string&)>;

/// The names kept read-only directly under each writable root.
inline constexpr const char* protected_names[] = {".git", ".codex", ".agents"};

/// The top-level entries that --isolate-reads leaves visible.
inline constexpr const char* system_paths[] = {
  "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "sys", "usr"};

/// The mounts of one confined command, in the order they are applied.
struct mount_layout {
  /// Writable roots, outermost only (one inside another adds nothing),
  /// shortest first.
  std::vector<std::string> writable;
  /// Existing .git/.codex/.agents under any writable root: read-only binds.
  std::vector<std::string> protect;
  /// --isolate-reads: top-level directories covered by an empty read-only
  /// tmpfs, and top-level non-directories covered by an empty file.
  std::vector<std::string> isolate_dirs;
  std::vector<std::string> isolate_files;
  /// --isolate-reads: directories shown again (readable and writable roots
  /// that lie under a covered directory get a mount point in its tmpfs).
  std::vector<std::string> readable;
  /// --hide, by kind: directories get an empty tmpfs-backed directory with
  /// mode 000, everything else an empty file with mode 000.
  std::vector<std::string> hide_dirs;
  std::vector<std::string> hide_files;
  /// Set when the plan cannot be carried out (e.g. a protected symlink).
  std::string error;
};

/// True when `path` is `root` or lies below it (both normalised, absolute).
bool is_within(const std::string& path, const std::string& root);

/// The roots that are not inside another one, shortest first, no duplicates.
std::vector<std::string> outermost(std::vector<std::string> roots);

/// Decides the layout. The plan's paths must already be canonical (no
/// symlink, `.` or `..`; see canonical_paths in confine.cpp); top_level
/// lists the names in "/" (only read with isolate_reads).
mount_layout make_layout(const plan& x, const probe_function& probe,
                         const std::vector<std::string>& top_level);

} // namespace parley::sandbox
