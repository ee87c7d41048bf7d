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

void to_json(json& j, const file_change_approval_params& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"itemId", x.item_id},
           {"startedAtMs", x.started_at_ms},
           {"reason", or_null(x.reason)},
           {"grantRoot", or_null(x.grant_root)}};
}

void from_json(const json& j, file_change_approval_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.turn_id = required<std::string>(j, "turnId");
  x.item_id = required<std::string>(j, "itemId");
  x.started_at_ms = required<int64_t>(j, "startedAtMs");
  x.reason = optional<std::string>(j, "reason");
  x.grant_root = optional<std::string>(j, "grantRoot");
}

namespace {

/// v1's ParsedCommand: the v2 CommandAction with `cmd` and snake_case types.
json v1_parsed_command(const command_action& a) {
  switch (a.type) {
    case command_action::kind::read:
      return json{{"type", "read"},
                  {"cmd", a.command},
                  {"name", a.name.value_or("")},
                  {"path", a.path.value_or("")}};
    case command_action::kind::list_files:
      return json{{"type", "list_files"}, {"cmd", a.command}, {"path", or_null(a.path)}};
    case command_action::kind::search:
      return json{{"type", "search"},
                  {"cmd", a.command},
                  {"query", or_null(a.query)},
                  {"path", or_null(a.path)}};
    case command_action::kind::unknown:
      break;
  }
  return json{{"type", "unknown"}, {"cmd", a.command}};
}

}  // namespace

void to_json(json& j, const exec_command_approval_params& x) {
  auto parsed = json::array();
  for (const auto& a : x.parsed_cmd) parsed.push_back(v1_parsed_command(a));
  j = json{{"conversationId", x.conversation_id},
           {"callId", x.call_id},
           {"approvalId", or_null(x.approval_id)},
           {"command", x.command},
           {"cwd", x.cwd},
           {"reason", or_null(x.reason)},
           {"parsedCmd", std::move(parsed)}};
}

void to_json(json& j, const apply_patch_approval_params& x) {
  auto changes = json::object();
  for (const auto& c : x.file_changes) {
    switch (c.type) {
      case file_update_change::kind::add:
        changes[c.path] = json{{"type", "add"}, {"content", c.diff}};
        break;
      case file_update_change::kind::remove:
        changes[c.path] = json{{"type", "delete"}, {"content", c.diff}};
        break;
      case file_update_change::kind::update:
        changes[c.path] =
            json{{"type", "update"}, {"unified_diff", c.diff}, {"move_path", or_null(c.move_path)}};
        break;
    }
  }
  j = json{{"conversationId", x.conversation_id},
           {"callId", x.call_id},
           {"fileChanges", std::move(changes)},
           {"reason", or_null(x.reason)},
           {"grantRoot", or_null(x.grant_root)}};
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

namespace parley::protocol {

approval_decision decode_file_change_result(const json& result) {
  auto d = decode_approval_result(result);
  using kind = approval_decision::kind;
  if (d.value != kind::accept && d.value != kind::accept_for_session && d.value != kind::decline
      && d.value != kind::cancel)
    throw_unknown_variant(to_string(d.value), {"accept", "acceptForSession", "decline", "cancel"});
  return d;
}

approval_decision decode_review_decision_result(const json& result) {
  require_object(result);
  auto j = required<json>(result, "decision");
  using kind = approval_decision::kind;
  static const std::initializer_list<const char*> expected = {
      "approved", "approved_execpolicy_amendment", "approved_for_session",
      "network_policy_amendment", "denied", "timed_out", "abort"};
  approval_decision d;
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "approved") d.value = kind::accept;
    else if (s == "approved_for_session") d.value = kind::accept_for_session;
    else if (s == "denied" || s == "timed_out") d.value = kind::decline;
    else if (s == "abort") d.value = kind::cancel;
    else throw_unknown_variant(s, expected);
    return d;
  }
  if (!j.is_object() || j.size() != 1) throw_invalid_type(j, "enum ReviewDecision");
  const auto& key = j.begin().key();
  const auto& body = j.begin().value();
  require_object(body);
  if (key == "approved_execpolicy_amendment") {
    d.value = kind::accept_with_execpolicy_amendment;
    d.execpolicy_amendment = required<std::vector<std::string>>(body, "proposed_execpolicy_amendment");
  } else if (key == "network_policy_amendment") {
    auto amendment = required<json>(body, "network_policy_amendment");
    require_object(amendment);
    d.value = kind::apply_network_policy_amendment;
    d.network.host = required<std::string>(amendment, "host");
    d.network.action = required<std::string>(amendment, "action");
    if (d.network.action != "allow" && d.network.action != "deny")
      throw_unknown_variant(d.network.action, {"allow", "deny"});
  } else if (key == "denied") {
    d.value = kind::decline;
    (void)required<std::string>(body, "rejection");
  } else {
    throw_unknown_variant(key, expected);
  }
  return d;
}

}  // namespace parley::protocol
