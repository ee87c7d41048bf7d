#pragma once

// Placeholders for protected names (.git, .codex, .agents) that do not exist
// under a writable root: a bind mount needs something to sit on, so the
// launcher creates an empty directory with mode 0400 for the run, which the
// sandbox then pins read-only, and removes it afterwards. Concurrent
// launchers on the same root share a placeholder (a shared flock each); the
// last one removes it. One left behind by a killed launcher is recognised
// (empty, mode 0400) and reused, then removed, by the next run on that root.

#include <string>
#include <utility>
#include <vector>

#include "actors/sandbox/failure.hpp"

namespace parley::sandbox {

class placeholder_set {
public:
  placeholder_set() = default;
  placeholder_set(const placeholder_set&) = delete;
  placeholder_set& operator=(const placeholder_set&) = delete;
  ~placeholder_set();

  /// Creates (or joins) a placeholder at each path. A path where the caller
  /// may not create anything (EACCES, EROFS) is returned in `skipped`: the
  /// command, running as the same user, cannot create it either.
  outcome acquire(const std::vector<std::string>& paths, std::vector<std::string>& skipped);

  /// Removes the placeholders no other launcher holds.
  void release();

private:
  std::vector<std::pair<std::string, int>> held_;
};

} // namespace parley::sandbox
