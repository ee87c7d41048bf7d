#pragma once
// Server -> client approval requests and the client's decisions (protocol.md §4).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/items.hpp"
#include "protocol/json_codec.hpp"

namespace parley::protocol {

constexpr const char* command_approval_method = "item/commandExecution/requestApproval";
constexpr const char* file_change_approval_method = "item/fileChange/requestApproval";
// Legacy v1 requests (seed 000), for clients that opt in with
// `capabilities.legacyApprovals`.
constexpr const char* exec_command_approval_method = "execCommandApproval";
constexpr const char* apply_patch_approval_method = "applyPatchApproval";

/// Params of item/commandExecution/requestApproval.
struct command_approval_params {
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  int64_t started_at_ms = 0;
  std::optional<std::string> command;
  std::optional<std::string> cwd;
  std::vector<command_action> command_actions;
  std::optional<std::string> reason;
  std::vector<std::string> proposed_execpolicy_amendment;
};
void to_json(json& j, const command_approval_params& x);
void from_json(const json& j, command_approval_params& x);

/// Params of item/fileChange/requestApproval. The diff is not in the
/// request: it is in the fileChange item that precedes it.
struct file_change_approval_params {
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  int64_t started_at_ms = 0;
  std::optional<std::string> reason;
  std::optional<std::string> grant_root;
};
void to_json(json& j, const file_change_approval_params& x);
void from_json(const json& j, file_change_approval_params& x);

/// Params of the v1 execCommandApproval: the command as argv, and its
/// parsed form in v1's shape (`cmd`, `list_files`).
struct exec_command_approval_params {
  std::string conversation_id;
  std::string call_id;
  std::optional<std::string> approval_id;
  std::vector<std::string> command;
  std::string cwd;
  std::optional<std::string> reason;
  std::vector<command_action> parsed_cmd;
};
void to_json(json& j, const exec_command_approval_params& x);

/// Params of the v1 applyPatchApproval: `fileChanges` maps each path to
/// {type:"add",content} | {type:"delete",content} | {type:"update",unified_diff,move_path}.
struct apply_patch_approval_params {
  std::string conversation_id;
  std::string call_id;
  std::vector<file_update_change> file_changes;  // add/delete: diff holds the content
  std::optional<std::string> reason;
  std::optional<std::string> grant_root;
};
void to_json(json& j, const apply_patch_approval_params& x);

struct network_policy_amendment {
  std::string host;
  std::string action;  // "allow" | "deny"
};

/// CommandExecutionApprovalDecision: every value of the schema.
struct approval_decision {
  enum class kind {
    accept,
    accept_for_session,
    accept_with_execpolicy_amendment,
    apply_network_policy_amendment,
    decline,
    cancel,
  };
  kind value = kind::decline;
  std::vector<std::string> execpolicy_amendment;  // accept_with_execpolicy_amendment
  network_policy_amendment network;               // apply_network_policy_amendment
  /// A request that is no approval (a question to the user, a client tool's
  /// call, a permission request): the client's result, checked against the
  /// schema and normalised (protocol/client_requests.hpp); `value` is
  /// accept when it answered.
  json answer;
  /// Who answered (issue 22), for the audit log, never on the wire: the
  /// client's tenant and subject, and whether it answered as an operator.
  std::string tenant;
  std::string subject;
  bool as_operator = false;

  static approval_decision accept() { return {kind::accept, {}, {}, {}, {}, {}, false}; }
  static approval_decision accept_for_session() {
    return {kind::accept_for_session, {}, {}, {}, {}, {}, false};
  }
  static approval_decision decline() { return {kind::decline, {}, {}, {}, {}, {}, false}; }
  static approval_decision cancel() { return {kind::cancel, {}, {}, {}, {}, {}, false}; }

  /// Whether the action may run. Only an explicit accept runs it.
  bool allows_run() const;
};
void to_json(json& j, const approval_decision& x);
void from_json(const json& j, approval_decision& x);
const char* to_string(approval_decision::kind x);

/// Decodes the `result` of an approval response: `{"decision": ...}`.
approval_decision decode_approval_result(const json& result);

/// Decodes the `result` of a fileChange approval: only accept,
/// acceptForSession, decline and cancel are valid there.
approval_decision decode_file_change_result(const json& result);

/// Decodes the `result` of a v1 request: `{"decision": ReviewDecision}`.
/// approved -> accept, approved_for_session -> acceptForSession,
/// approved_execpolicy_amendment -> acceptWithExecpolicyAmendment,
/// network_policy_amendment -> applyNetworkPolicyAmendment, denied (bare or
/// {"denied":{"rejection"}}) and timed_out -> decline, abort -> cancel.
/// approved_mcp_policy_amendment answers an MCP tool call, not a command or
/// patch: it is refused like any undecodable reply.
approval_decision decode_review_decision_result(const json& result);

}  // namespace parley::protocol
