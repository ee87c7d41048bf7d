#pragma once
// `parley store check`: names every damaged rollout of a home and every
// index entry that disagrees with them; with --repair salvages the rollouts
// (actors/store/store_check) and rebuilds the index.
//
//   parley store check [--home=DIR] [--repair]

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

}  // namespace parley
