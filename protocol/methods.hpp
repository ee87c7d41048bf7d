#pragma once
// Client -> server request params and their results (protocol.md §2).

#include <optional>
#include <string>
#include <vector>

#include "protocol/client_requests.hpp"
#include "protocol/types.hpp"

namespace parley::protocol {

// -- initialize ------------------------------------------------------------------

struct client_info {
  std::string name;
  std::string version;
  std::optional<std::string> title;
};

struct initialize_capabilities {
  bool experimental_api = false;
  std::vector<std::string> opt_out_notification_methods;
  bool request_attestation = false;
  bool required_human_approval = false;
  /// parley extension: the client wants v1 execCommandApproval/applyPatchApproval.
  bool legacy_approvals = false;
};

struct initialize_params {
  client_info client;
  initialize_capabilities capabilities;
};
void from_json(const json& j, initialize_params& x);
void to_json(json& j, const initialize_params& x);

struct initialize_response {
  std::string user_agent;
  std::string codex_home;
  std::string platform_family = "unix";
  std::string platform_os = "linux";
};
void to_json(json& j, const initialize_response& x);
void from_json(const json& j, initialize_response& x);

// -- thread/start ------------------------------------------------------------------

struct thread_start_params {
  std::optional<std::string> cwd;
  std::optional<std::string> model;
  std::optional<std::string> model_provider;
  std::optional<approval_policy> approval_policy_;
  std::optional<std::string> approvals_reviewer;
  std::optional<sandbox_mode> sandbox;
  std::optional<bool> ephemeral;
  std::optional<std::string> base_instructions;
  std::optional<std::string> developer_instructions;
  /// Tools the client declares for the thread (experimental): offered to the
  /// model, called with item/tool/call.
  std::optional<std::vector<dynamic_tool>> dynamic_tools;
  json dynamic_tool_specs;  // dynamicTools as given (stored with the thread)
  /// Cluster: the id rendezvous placement chose for the new thread (never
  /// read from a client's params); empty: a new one.
  std::string assigned_id;
  /// The tenant of the client that starts it (its credentials; never read
  /// from params).
  std::string tenant;
};
void from_json(const json& j, thread_start_params& x);
void to_json(json& j, const thread_start_params& x);

/// The shape shared by thread/start, thread/resume and thread/fork results.
struct thread_session_response {
  thread thread_;
  std::string model;
  std::string model_provider;
  std::string cwd;
  approval_policy approval_policy_;
  std::string approvals_reviewer = "user";
  sandbox_policy sandbox;
};
void to_json(json& j, const thread_session_response& x);
void from_json(const json& j, thread_session_response& x);

// -- thread/read, thread/loaded/list -----------------------------------------------

struct thread_read_params {
  std::string thread_id;
  bool include_turns = false;
};
void from_json(const json& j, thread_read_params& x);
void to_json(json& j, const thread_read_params& x);

struct thread_read_response {
  thread thread_;
};
void to_json(json& j, const thread_read_response& x);
void from_json(const json& j, thread_read_response& x);

struct thread_loaded_list_params {
  std::optional<std::string> cursor;
  std::optional<uint32_t> limit;
  /// Only this tenant's threads (the client's; never read from params);
  /// nullopt: every tenant's (an operator).
  std::optional<std::string> tenant;
};
void from_json(const json& j, thread_loaded_list_params& x);
void to_json(json& j, const thread_loaded_list_params& x);

struct thread_loaded_list_response {
  std::vector<std::string> data;
  std::optional<std::string> next_cursor;
};
void to_json(json& j, const thread_loaded_list_response& x);
void from_json(const json& j, thread_loaded_list_response& x);

// -- turn/start, turn/interrupt ----------------------------------------------------

struct turn_start_params {
  std::string thread_id;
  std::vector<user_input> input;
  std::optional<std::string> cwd;
  std::optional<approval_policy> approval_policy_;
  std::optional<sandbox_policy> sandbox_policy_;
  std::optional<std::string> model;
  std::optional<std::string> client_user_message_id;
  /// A structured turn (e.g. the TUI's title generation): the answer must
  /// follow this JSON Schema, and the turn may not run tools or ask.
  std::optional<json> output_schema;
};
void from_json(const json& j, turn_start_params& x);
void to_json(json& j, const turn_start_params& x);

struct turn_start_response {
  turn turn_;
};
void to_json(json& j, const turn_start_response& x);
void from_json(const json& j, turn_start_response& x);

/// thread/turns/list: a thread's turns, a page at a time.
struct thread_turns_list_params {
  std::string thread_id;
  std::optional<std::string> cursor;
  std::optional<uint32_t> limit;
  bool ascending = false;              // sortDirection: "asc", or "desc" (the default)
  std::string items_view = "summary";  // "notLoaded" | "summary" | "full"
};
void from_json(const json& j, thread_turns_list_params& x);

struct thread_turns_list_response {
  std::vector<turn> data;
  std::optional<std::string> next_cursor;
  std::optional<std::string> backwards_cursor;
};
void to_json(json& j, const thread_turns_list_response& x);

/// turn/steer: more input for the running turn; its model sees it at its
/// next request.
struct turn_steer_params {
  std::string thread_id;
  std::vector<user_input> input;
  /// Required: the steer fails unless this turn is the active one.
  std::string expected_turn_id;
  std::optional<std::string> client_user_message_id;
};
void from_json(const json& j, turn_steer_params& x);
void to_json(json& j, const turn_steer_params& x);

struct turn_steer_response {
  std::string turn_id;
};
void to_json(json& j, const turn_steer_response& x);
void from_json(const json& j, turn_steer_response& x);

struct turn_interrupt_params {
  std::string thread_id;
  std::string turn_id;
};
void from_json(const json& j, turn_interrupt_params& x);
void to_json(json& j, const turn_interrupt_params& x);

/// thread/shellCommand: the user's own command (`!cmd` in the TUI), run in
/// the thread's sandbox as a turn of its own. The reply is `{}` at once.
struct thread_shell_command_params {
  std::string thread_id;
  std::string command;
  /// null: the default (an hour, within the configured maximum); 0: an
  /// immediate timeout.
  std::optional<int64_t> timeout_ms;
};
void from_json(const json& j, thread_shell_command_params& x);
void to_json(json& j, const thread_shell_command_params& x);

// -- bootstrap methods the TUI needs (minimal honest answers, protocol.md §6) -----

/// account/read: parley needs no account.
json account_read_result();
/// model/list: the one built-in scripted model.
json model_list_result(const std::string& model_id);
/// config/read: parley has no config.toml layers.
json config_read_result();
/// configRequirements/read: no requirements.
json config_requirements_read_result();

}  // namespace parley::protocol

namespace parley::protocol {

// -- thread/resume, thread/fork ----------------------------------------------------

/// Overrides shared by thread/resume and thread/fork (sticky, like thread/start's).
struct thread_overrides {
  std::optional<std::string> cwd;
  std::optional<std::string> model;
  std::optional<approval_policy> approval_policy_;
  std::optional<sandbox_mode> sandbox;
  std::optional<std::string> approvals_reviewer;
};

struct thread_resume_params {
  std::string thread_id;
  std::optional<std::string> path;  // experimental
  bool exclude_turns = false;
  thread_overrides overrides;
};
void from_json(const json& j, thread_resume_params& x);
void to_json(json& j, const thread_resume_params& x);

struct thread_fork_params {
  std::string thread_id;
  std::optional<std::string> path;  // experimental
  bool ephemeral = false;
  bool exclude_turns = false;
  std::optional<std::string> last_turn_id;
  thread_overrides overrides;
};
void from_json(const json& j, thread_fork_params& x);
void to_json(json& j, const thread_fork_params& x);

// -- thread/list -------------------------------------------------------------------

struct thread_list_params {
  std::optional<std::string> cursor;
  std::optional<uint32_t> limit;
  std::string sort_key = "created_at";  // created_at | updated_at | recency_at
  std::string sort_direction = "desc";  // asc | desc
  std::vector<std::string> model_providers;
  std::vector<std::string> source_kinds;
  bool archived = false;
  std::vector<std::string> cwds;  // `cwd`: a string or an array
  std::optional<std::string> search_term;
  /// Only this tenant's threads (the client's; never read from params);
  /// nullopt: every tenant's (an operator).
  std::optional<std::string> tenant;
};
void from_json(const json& j, thread_list_params& x);
void to_json(json& j, const thread_list_params& x);

struct thread_list_response {
  std::vector<thread> data;
  std::optional<std::string> next_cursor;
};
void to_json(json& j, const thread_list_response& x);
void from_json(const json& j, thread_list_response& x);

// -- thread/archive, thread/unarchive, thread/name/set, thread/unsubscribe ----------

struct thread_id_params {
  std::string thread_id;
};
void from_json(const json& j, thread_id_params& x);
void to_json(json& j, const thread_id_params& x);

struct thread_name_set_params {
  std::string thread_id;
  std::optional<std::string> name;
};
void from_json(const json& j, thread_name_set_params& x);
void to_json(json& j, const thread_name_set_params& x);

/// thread/unsubscribe result: "unsubscribed" | "notSubscribed" | "notLoaded".
struct thread_unsubscribe_response {
  std::string status;
};
void to_json(json& j, const thread_unsubscribe_response& x);

}  // namespace parley::protocol
