#pragma once
// Digests that bind an approval to exactly the action that was shown: a
// decision counts only for the action whose digest it was asked with.

#include <string>
#include <vector>

#include "actors/patch/apply_patch.hpp"

namespace parley {

/// "sha256:<hex>" of a shell command and the directory it runs in.
std::string command_digest(const std::string& command, const std::string& cwd);

/// "sha256:<hex>" of planned file changes: each file's kind, paths, and its
/// content before and after.
std::string changes_digest(const std::vector<patch::file_change>& changes);

/// "sha256:<hex>" of a request to a client that is no approval (its kind
/// and its params as sent).
std::string request_digest(const std::string& kind, const std::string& params_json);

}  // namespace parley
