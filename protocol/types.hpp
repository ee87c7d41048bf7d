#pragma once
// Shared v2 protocol types: policies, statuses, user input, turns and threads.
// Shapes follow the Codex 0.169 JSON Schema (see ../shared/protocol.md §2).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/items.hpp"
#include "protocol/json_codec.hpp"

namespace parley::protocol {

// -- AskForApproval ------------------------------------------------------------

struct granular_approval {
  bool sandbox_approval = false;
  bool rules = false;
  bool mcp_elicitations = false;
  bool request_permissions = false;
  bool skill_approval = false;
};

/// When a turn must ask before running a command.
struct approval_policy {
  enum class kind { untrusted, on_request, never, granular };
  kind value = kind::on_request;
  granular_approval granular;  // only for kind::granular

  static approval_policy never() { return {kind::never, {}}; }
  static approval_policy on_request() { return {kind::on_request, {}}; }
  static approval_policy untrusted() { return {kind::untrusted, {}}; }
  friend bool operator==(const approval_policy& a, const approval_policy& b) {
    return a.value == b.value;
  }
};
void to_json(json& j, const approval_policy& x);
void from_json(const json& j, approval_policy& x);

// -- Sandbox -------------------------------------------------------------------

enum class sandbox_mode { read_only, workspace_write, danger_full_access };
void to_json(json& j, const sandbox_mode& x);
void from_json(const json& j, sandbox_mode& x);

struct sandbox_policy {
  enum class kind { danger_full_access, read_only, workspace_write, external_sandbox };
  kind type = kind::workspace_write;
  bool network_access = false;
  std::vector<std::string> writable_roots;
  bool exclude_tmpdir_env_var = false;
  bool exclude_slash_tmp = false;

  static sandbox_policy from_mode(sandbox_mode m);
};
void to_json(json& j, const sandbox_policy& x);
void from_json(const json& j, sandbox_policy& x);

// -- Thread status -------------------------------------------------------------

struct thread_status {
  enum class kind { not_loaded, idle, system_error, active };
  kind type = kind::idle;
  bool waiting_on_approval = false;  // only for kind::active
  bool waiting_on_user_input = false;

  static thread_status idle() { return {kind::idle, false, false}; }
  static thread_status active(bool waiting) { return {kind::active, waiting, false}; }
  friend bool operator==(const thread_status& a, const thread_status& b) {
    return a.type == b.type && a.waiting_on_approval == b.waiting_on_approval
           && a.waiting_on_user_input == b.waiting_on_user_input;
  }
  friend bool operator!=(const thread_status& a, const thread_status& b) { return !(a == b); }
};
void to_json(json& j, const thread_status& x);
void from_json(const json& j, thread_status& x);

// -- Turns ---------------------------------------------------------------------

enum class turn_status { in_progress, completed, interrupted, failed };
void to_json(json& j, const turn_status& x);
void from_json(const json& j, turn_status& x);
const char* to_string(turn_status x);

struct turn_error {
  std::string message;
  std::optional<std::string> codex_error_info;  // the string variants only
  std::optional<std::string> additional_details;
};
void to_json(json& j, const turn_error& x);
void from_json(const json& j, turn_error& x);

struct turn {
  std::string id;
  std::vector<thread_item> items;
  turn_status status = turn_status::in_progress;
  std::optional<turn_error> error;
  std::optional<int64_t> started_at;    // unix seconds
  std::optional<int64_t> completed_at;  // unix seconds
  std::optional<int64_t> duration_ms;
  /// How much of `items` is here: "notLoaded", "summary" or "full"
  /// (absent: full, the schema's default).
  std::optional<std::string> items_view;
};
void to_json(json& j, const turn& x);
void from_json(const json& j, turn& x);

// -- Threads -------------------------------------------------------------------

/// A thread's Git metadata (thread/metadata/update sets it).
struct git_info {
  std::optional<std::string> sha;
  std::optional<std::string> branch;
  std::optional<std::string> origin_url;
  bool operator==(const git_info& o) const {
    return sha == o.sha && branch == o.branch && origin_url == o.origin_url;
  }
};
void to_json(json& j, const git_info& x);
void from_json(const json& j, git_info& x);

struct thread {
  std::string id;
  std::string preview;
  bool ephemeral = false;
  std::string model_provider;
  std::optional<std::string> model;
  int64_t created_at = 0;  // unix seconds
  int64_t updated_at = 0;
  thread_status status;
  std::optional<std::string> path;
  std::string cwd;
  std::string cli_version;
  std::string source = "vscode";  // what Codex records for app-server threads
  std::optional<std::string> name;
  std::optional<std::string> forked_from_id;
  std::optional<git_info> git;  // null until thread/metadata/update sets some
  std::vector<turn> turns;
  /// The tools its client declared at thread/start (`dynamicTools`, the
  /// DynamicToolSpec[] as given; null: none). Not part of the wire Thread:
  /// kept with the thread (its session metadata, where Codex keeps them) so
  /// a resumed thread still offers them to its model.
  json dynamic_tools;
  /// The tenant it belongs to (issue 22): whoever created it, inherited by
  /// its forks; empty when stored before tenants (the default tenant). Not
  /// part of the wire Thread: kept in its session metadata.
  std::string tenant;
};
void to_json(json& j, const thread& x);
void from_json(const json& j, thread& x);

}  // namespace parley::protocol
