#pragma once
// `parley store check [--repair]`: every rollout of a home checked
// (rollout_check), the index compared with them, and the repair of both.
// The caller holds the home lock.

#include <caf/expected.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/store/rollout_check.hpp"

namespace parley::store {

/// What was found under a home.
struct store_report {
  /// Rollouts under sessions/ and archived_sessions/.
  size_t rollouts = 0;
  /// Each rollout's findings in path order, then the index's.
  std::vector<finding> findings;
  /// The rollouts with findings, unreadable or damaged.
  std::vector<std::string> damaged;
  size_t unreadable_count = 0;
  size_t index_findings = 0;

  bool sound() const { return findings.empty(); }
};

/// Checks every rollout under `home` and whether the index agrees with them:
/// each entry's file exists, is a readable rollout of the home holding that
/// thread, archived where the entry says; each readable rollout's thread is
/// in it. A home without an index has no index findings (a start builds it).
store_report check_store(const std::string& home);

/// One rollout's repair.
struct rollout_repair {
  std::string path;
  rollout_scan scan;  // as it was found (but for the salvaged lines)
  size_t lines = 0;   // lines of the repaired rollout, its session metadata included
  std::string kept;   // where the damaged original is; empty if it failed
  std::string error;  // why it failed
};

/// What `repair_store` did.
struct store_repair {
  std::vector<rollout_repair> rollouts;
  /// Threads in the rebuilt index; the error if it could not be rebuilt.
  caf::expected<size_t> indexed = size_t{0};
};

/// Repairs every rollout of `report.damaged` (repair_rollout), then rebuilds
/// the index from the rollouts (when anything was repaired or the index had
/// findings).
store_repair repair_store(const std::string& home, const store_report& report, int64_t now_unix_s);

}  // namespace parley::store
