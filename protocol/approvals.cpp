#include "protocol/approvals.hpp"

namespace parley::protocol {

void to_json(json& j, const command_approval_params& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"itemId", x.item_id},
           {"startedAtMs", x.started_at_ms},
           {"kind", "command"},
           {"approvalId", nullptr},
           {"reason", or_null(x.reason)},
           {"command", or_null(x.command)},
           {"cwd", or_null(x.cwd)},
           {"commandActions", x.command_actions}};
  if (!x.proposed_execpolicy_amendment.empty())
    j["proposedExecpolicyAmendment"] = x.proposed_execpolicy_amendment;
}

void from_json(const json& j, command_approval_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.turn_id = required<std::string>(j, "turnId");
  x.item_id = required<std::string>(j, "itemId");
  x.started_at_ms = required<int64_t>(j, "startedAtMs");
  x.command = optional<std::string>(j, "command");
  x.cwd = optional<std::string>(j, "cwd");
  x.command_actions = optional<std::vector<command_action>>(j, "commandActions")
                          .value_or(std::vector<command_action>{});
  x.reason = optional<std::string>(j, "reason");
  x.proposed_execpolicy_amendment =
      optional<std::vector<std::string>>(j, "proposedExecpolicyAmendment")
          .value_or(std::vector<std::string>{});
}

bool approval_decision::allows_run() const {
  switch (value) {
    case kind::accept:
    case kind::accept_for_session:
    case kind::accept_with_execpolicy_amendment:
      return true;
    case kind::apply_network_policy_amendment:
      return network.action == "allow";
    case kind::decline:
    case kind::cancel:
      return false;
  }
  return false;
}

const char* to_string(approval_decision::kind x) {
  switch (x) {
    case approval_decision::kind::accept:
      return "accept";
    case approval_decision::kind::accept_for_session:
      return "acceptForSession";
    case approval_decision::kind::accept_with_execpolicy_amendment:
      return "acceptWithExecpolicyAmendment";
    case approval_decision::kind::apply_network_policy_amendment:
      return "applyNetworkPolicyAmendment";
    case approval_decision::kind::decline:
      return "decline";
    case approval_decision::kind::cancel:
      return "cancel";
  }
  return "decline";
}

void to_json(json& j, const approval_decision& x) {
  switch (x.value) {
    case approval_decision::kind::accept_with_execpolicy_amendment:
      j = json{{"acceptWithExecpolicyAmendment",
                {{"execpolicy_amendment", x.execpolicy_amendment}}}};
      return;
    case approval_decision::kind::apply_network_policy_amendment:
      j = json{{"applyNetworkPolicyAmendment",
                {{"network_policy_amendment",
                  {{"host", x.network.host}, {"action", x.network.action}}}}}};
      return;
    default:
      j = to_string(x.value);
  }
}

void from_json(const json& j, approval_decision& x) {
  x = approval_decision{};
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    for (auto k : {approval_decision::kind::accept, approval_decision::kind::accept_for_session,
                   approval_decision::kind::decline, approval_decision::kind::cancel})
      if (s == to_string(k)) {
        x.value = k;
        return;
      }
    throw_unknown_variant(s, {"accept", "acceptForSession", "acceptWithExecpolicyAmendment",
                              "applyNetworkPolicyAmendment", "decline", "cancel"});
  }
  if (!j.is_object() || j.size() != 1) throw_invalid_type(j, "enum CommandExecutionApprovalDecision");
  if (auto a = j.find("acceptWithExecpolicyAmendment"); a != j.end()) {
    require_object(*a);
    x.value = approval_decision::kind::accept_with_execpolicy_amendment;
    x.execpolicy_amendment = required<std::vector<std::string>>(*a, "execpolicy_amendment");
    return;
  }
  if (auto n = j.find("applyNetworkPolicyAmendment"); n != j.end()) {
    require_object(*n);
    auto amendment = required<json>(*n, "network_policy_amendment");
    require_object(amendment);
    x.value = approval_decision::kind::apply_network_policy_amendment;
    x.network.host = required<std::string>(amendment, "host");
    x.network.action = required<std::string>(amendment, "action");
    if (x.network.action != "allow" && x.network.action != "deny")
      throw_unknown_variant(x.network.action, {"allow", "deny"});
    return;
  }
  throw_unknown_variant(j.begin().key(), {"acceptWithExecpolicyAmendment",
                                          "applyNetworkPolicyAmendment"});
}

approval_decision decode_approval_result(const json& result) {
  require_object(result);
  return required<approval_decision>(result, "decision");
}

}  // namespace parley::protocol
