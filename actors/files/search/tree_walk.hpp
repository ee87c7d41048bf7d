#pragma once
// The directory walk behind fuzzyFileSearch: depth first through open
// descriptors (openat with O_NOFOLLOW on each name, readdir's getdents64
// underneath), so it never leaves the directory it started from by a
// symbolic link, a ".." or a rename of a name it already passed, and an
// unreadable directory is skipped, not an error. Symbolic links are
// reported as files and never followed. What the .gitignore and .ignore
// files (of the tree, and of the directories above it) ignore is neither
// reported nor entered.

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::files::search {

struct walk_limits {
  size_t max_entries = 2'000'000;  // then the walk stops (truncated)
  size_t max_depth = 256;          // deeper directories are not entered
};

struct walk_stats {
  size_t entries = 0;  // reported
  bool truncated = false;
  bool cancelled = false;
};

/// One entry: its path from the walk's start ("" for the start itself),
/// where its last component begins in it, and whether it is a directory.
struct walk_entry {
  std::string_view path;
  size_t name_at = 0;
  bool is_dir = false;
  std::string_view name() const { return path.substr(name_at); }
};

struct walk_options {
  /// The start's real absolute path: where the ignore files above it are.
  std::string start_path;
  /// Directories (absolute) never entered nor reported: parley's home.
  std::vector<std::string> excluded;
  const std::atomic<bool>* cancelled = nullptr;  // checked every 256 entries
  walk_limits limits;
};

/// Walks from `start_fd` (a directory; not closed), calling `visit` for each
/// entry, the start itself first.
walk_stats walk_tree(int start_fd, const walk_options& options,
                     const std::function<void(const walk_entry&)>& visit);

}  // namespace parley::files::search
