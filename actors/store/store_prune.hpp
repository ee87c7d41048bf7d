#pragma once
// Retention for the local store (`parley store prune`): threads last updated
// before a cutoff leave for good, their rollout and their index row together
// (the rollout first, as thread/delete: rollout_delete.hpp says why).
//
// It runs beside no server: the caller holds the home's lock, so no thread of
// the home is loaded and no turn runs. A thread whose last turn still has
// an action pending (an approval asked, a command started: work the next
// server goes on with) is kept whatever its age. Threads that never had a
// turn are not in the index and are not pruned (as they are not listed).

#include <caf/expected.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parley::store {

struct prune_request {
  std::string home;
  int64_t cutoff_s = 0;        // updated before this (unix seconds) goes
  bool archived_only = false;  // only threads in archived_sessions
  bool dry_run = false;        // name them, remove nothing
  std::optional<std::string> tenant;  // only this tenant's threads (nullopt: every tenant's)
};

struct pruned_thread {
  std::string id;
  std::string path;
  int64_t updated_at = 0;
  int64_t bytes = 0;
  std::string error;  // why it could not be removed ("" when it was)
};

struct prune_result {
  std::vector<pruned_thread> threads;  // removed (or, dry run, to be removed)
  size_t kept_pending = 0;             // old enough, but with work in flight
  int64_t bytes = 0;
};

/// Brings the index up to date with the rollouts first (the journals a
/// killed server left, or a rebuild of a missing index), then prunes.
caf::expected<prune_result> prune_store(const prune_request& req);

}  // namespace parley::store
