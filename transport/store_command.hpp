#pragma once
// `parley store check`: names every damaged rollout of a home and every
// index entry that disagrees with them; with --repair salvages the rollouts
// (actors/store/store_check) and rebuilds the index.
//
//   parley store check [--home=DIR] [--repair]
//   parley store prune [--home=DIR] --older-than D [--archived-only] [--dry-run]

#include <string>

namespace parley {

/// What `parley store check` was asked (filled by transport/command_line).
struct store_check_request {
  std::string home;
  bool repair = false;
};

/// One line per finding on stdout ("damaged P:7: not JSON"), with --repair
/// one per rollout repaired, then a summary line ("checked N rollout(s)
/// under H: ..."). Exit 0 when everything is sound (with --repair: when
/// everything found was repaired), 1 when anything is damaged or the check
/// cannot run (another process holds the home: stderr says why), 2 when the
/// home does not exist.
int run_store_check(const store_check_request& req);

/// What `parley store prune` was asked.
struct store_prune_request {
  std::string home;
  std::string older_than;  // a duration: "90d", "2w", "12h"
  bool archived_only = false;
  bool dry_run = false;
  std::string tenant;  // only this tenant's threads ("": every tenant's)
};

/// `parley store prune --older-than D [--archived-only] [--tenant T] [--dry-run]`:
/// removes the threads last updated more than D ago (actors/store/
/// store_prune), one line per thread ("pruned ID PATH" or, dry run, "would
/// prune ID PATH"), then a summary. Refused (exit 1) while a server holds
/// the home: a running server prunes by its own setting (--prune-older-than).
/// Exit 0 when done, 1 when anything failed, 2 on a usage error.
int run_store_prune(const store_prune_request& req);

}  // namespace parley
