#pragma once
// What the approval pipeline's stages review; what each stage answers (the
// verdict) is plain data in actors/core/approval_types.hpp. Shared by the
// rules stage, in-process hooks (hooks/approval_hook.hpp) and external hook
// programs (hooks/external_hook.hpp), which get it as JSON.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actors/core/approval_types.hpp"

namespace parley::hooks {

/// One file of a file change, as the fileChange item shows it.
struct file_change {
  std::string path;                      // absolute
  std::string kind;                      // "add" | "delete" | "update"
  std::optional<std::string> move_path;  // update with a rename
  std::string diff;                      // unified diff (add/delete: the content)
};

/// One action under review.
struct review_request {
  action_kind what = action_kind::command;
  uint64_t approval_key = 0;
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  std::string cwd;
  // command: the shell command line, and its words when it is a simple
  // command (no pipes, redirections, substitutions).
  std::string command;
  std::optional<std::vector<std::string>> argv;
  // file_change: every file the patch touches.
  std::vector<file_change> changes;
  // tool: its name and arguments.
  std::string tool;
  nlohmann::json arguments;
  std::optional<std::string> reason;
  /// "sha256:<hex>" of exactly what is being approved (command + cwd, or the patch).
  std::string digest;
  /// Free-form annotations; an in-process hook's prepare() may add some.
  std::map<std::string, std::string> metadata;
};

/// The JSON an external hook program reads on its stdin:
/// {"type": "command"|"fileChange"|"tool", "approvalId", "threadId", "turnId",
///  "itemId", "cwd", "command", "argv", "changes": [{path, kind, movePath, diff}],
///  "tool", "arguments", "reason", "actionDigest", "metadata"}
nlohmann::json to_json(const review_request& r);

}  // namespace parley::hooks
