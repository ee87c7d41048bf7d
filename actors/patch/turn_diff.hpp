#pragma once
// The turn-level diff of turn/diff/updated: every file a turn's patches
// touched, from its content before the turn's first change to its content
// now, as one unified diff. A file changed by two patches appears once.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/patch/apply_patch.hpp"

namespace parley::patch {

class turn_diff {
 public:
  /// Records changes that were applied (in order).
  void record(const std::vector<file_change>& applied);

  /// The aggregated diff, files in path order; empty when nothing changed.
  std::string render() const;

 private:
  struct tracked {
    std::optional<std::string> original_path;  // nullopt: created in this turn
    std::optional<std::string> baseline;       // content before the turn
    std::optional<std::string> current_path;   // nullopt: deleted
    std::string current;                       // content now
  };
  // Keyed by the file's current path (or its last path once deleted).
  std::map<std::string, tracked> files_;
};

}  // namespace parley::patch
