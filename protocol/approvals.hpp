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

  static approval_decision accept() { return {kind::accept, {}, {}}; }
  static approval_decision accept_for_session() { return {kind::accept_for_session, {}, {}}; }
  static approval_decision decline() { return {kind::decline, {}, {}}; }
  static approval_decision cancel() { return {kind::cancel, {}, {}}; }

  /// Whether the action may run. Only an explicit accept runs it.
  bool allows_run() const;
};
void to_json(json& j, const approval_decision& x);
void from_json(const json& j, approval_decision& x);
const char* to_string(approval_decision::kind x);

/// Decodes the `result` of an approval response: `{"decision": ...}`.
approval_decision decode_approval_result(const json& result);

}  // namespace parley::protocol
