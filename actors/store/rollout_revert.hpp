#pragma once
// thread/revert in a rollout file: the lines a thread keeps when it goes
// back to its turns before one, and replacing the file with them so that a
// crash at any moment leaves either the old rollout or the new one whole.

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <string>
#include <vector>

namespace parley::store {

/// The rollout `lines` without turn `turn_id` and every later turn: the lines
/// before its task_started, then the thread's own records written after it
/// (its name, goal and Git metadata, in order), then a `parley_reverted` line.
/// "turn not found: <id>" when no turn of that id starts in the file.
caf::expected<std::vector<std::string>> reverted_lines(const std::vector<std::string>& lines,
                                                       const std::string& turn_id);

/// Writes `lines` to a hidden file beside `path`, syncs it, renames it over
/// `path` and syncs the folder. Until the rename the old file stands; after
/// it, the new one.
caf::error replace_rollout(const std::string& path, const std::vector<std::string>& lines);

}  // namespace parley::store
