#pragma once
// What a turn's actions look like to the rest of the runtime (pure): the ask
// an approval decides on, and the file changes an item shows.

#include <optional>
#include <string>
#include <vector>

#include "actors/threads/turn.hpp"

namespace parley {

/// What the approval pipeline and the client see of a command.
approval_ask command_ask(const turn_settings& settings, const command_step& cmd);

/// What the approval pipeline and the client see of a planned file change.
approval_ask file_change_ask(const turn_settings& settings, const patch_step& p);

/// The changes a fileChange item shows (absolute paths, kinds, diffs).
std::vector<protocol::file_update_change> describe_changes(
    const std::vector<patch::file_change>& planned);

/// Why a patch will not be asked about: it does not parse or plan, or it
/// reaches outside the writable roots (`by_policy`).
struct patch_refusal {
  std::string reason;
  bool by_policy = false;
};

/// Parses and plans a patch against the settings' cwd and writable roots,
/// filling `p`'s planned changes and item; or says why not.
std::optional<patch_refusal> prepare_patch(const turn_settings& settings, const std::string& text,
                                           patch_step& p);

/// Where a command runs: the thread's cwd, or the model's `workdir` (an
/// absolute path, or one relative to the cwd).
std::string working_directory(const std::string& cwd, const std::string& workdir);

/// How a step ended, with an optional detail (a reason, a refusal).
step_result outcome(step_result::kind what, std::string detail = {});

/// A command that ended (or never started): its exit code, wall time and output.
step_result command_result(const protocol::command_execution_item& item, const exit_info& info);

/// An applied patch: each file with what happened to it ('A', 'M', 'D').
step_result patch_result(const std::vector<patch::file_change>& applied);

}  // namespace parley
