#pragma once
// What the approval pipeline's stages review, and what each stage answers.
// Shared by the rules stage, in-process hooks (hooks/approval_hook.hpp) and
// external hook programs (hooks/external_hook.hpp), which get it as JSON.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace parley::hooks {

/// A stage's answer. `abstain` passes the approval on to the next stage.
struct verdict {
  enum class kind { allow, deny, abstain };
  kind what = kind::abstain;
  std::string reason;

  static verdict allow(std::string why = {}) { return {kind::allow, std::move(why)}; }
  static verdict deny(std::string why) { return {kind::deny, std::move(why)}; }
  static verdict abstain() { return {kind::abstain, {}}; }
};
const char* to_string(verdict::kind x);

/// What kind of action waits for approval.
enum class action_kind { command, file_change, tool };
const char* to_string(action_kind x);  // "command" | "fileChange" | "tool"

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
