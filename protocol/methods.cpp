#include "protocol/methods.hpp"

namespace parley::protocol {

// -- initialize ------------------------------------------------------------------

void from_json(const json& j, initialize_params& x) {
  require_object(j);
  auto info = required<json>(j, "clientInfo");
  require_object(info);
  x.client.name = required<std::string>(info, "name");
  x.client.version = required<std::string>(info, "version");
  x.client.title = optional<std::string>(info, "title");
  if (auto caps = optional<json>(j, "capabilities")) {
    require_object(*caps);
    x.capabilities.experimental_api = optional<bool>(*caps, "experimentalApi").value_or(false);
    x.capabilities.opt_out_notification_methods
        = optional<std::vector<std::string>>(*caps, "optOutNotificationMethods")
              .value_or(std::vector<std::string>{});
    x.capabilities.request_attestation
        = optional<bool>(*caps, "requestAttestation").value_or(false);
    x.capabilities.required_human_approval
        = optional<bool>(*caps, "requiredHumanApproval").value_or(false);
    x.capabilities.legacy_approvals = optional<bool>(*caps, "legacyApprovals").value_or(false);
  }
}

void to_json(json& j, const initialize_params& x) {
  j = json{{"clientInfo",
            {{"name", x.client.name},
             {"version", x.client.version},
             {"title", or_null(x.client.title)}}},
           {"capabilities",
            {{"experimentalApi", x.capabilities.experimental_api},
             {"optOutNotificationMethods", x.capabilities.opt_out_notification_methods},
             {"legacyApprovals", x.capabilities.legacy_approvals}}}};
}

void to_json(json& j, const initialize_response& x) {
  j = json{{"userAgent", x.user_agent},
           {"codexHome", x.codex_home},
           {"platformFamily", x.platform_family},
           {"platformOs", x.platform_os}};
}

void from_json(const json& j, initialize_response& x) {
  require_object(j);
  x.user_agent = required<std::string>(j, "userAgent");
  x.codex_home = required<std::string>(j, "codexHome");
  x.platform_family = required<std::string>(j, "platformFamily");
  x.platform_os = required<std::string>(j, "platformOs");
}

// -- thread/start ------------------------------------------------------------------

void from_json(const json& j, thread_start_params& x) {
  require_object(j);
  x.cwd = optional<std::string>(j, "cwd");
  x.model = optional<std::string>(j, "model");
  x.model_provider = optional<std::string>(j, "modelProvider");
  x.approval_policy_ = optional<approval_policy>(j, "approvalPolicy");
  x.approvals_reviewer = optional<std::string>(j, "approvalsReviewer");
  if (x.approvals_reviewer && *x.approvals_reviewer != "user"
      && *x.approvals_reviewer != "auto_review" && *x.approvals_reviewer != "guardian_subagent")
    throw_unknown_variant(*x.approvals_reviewer, {"user", "auto_review", "guardian_subagent"});
  x.sandbox = optional<sandbox_mode>(j, "sandbox");
  x.ephemeral = optional<bool>(j, "ephemeral");
  x.base_instructions = optional<std::string>(j, "baseInstructions");
  x.developer_instructions = optional<std::string>(j, "developerInstructions");
  if (auto d = j.find("dynamicTools"); d != j.end() && !d->is_null()) {
    x.dynamic_tools = decode_dynamic_tools(*d);
    x.dynamic_tool_specs = *d;
  }
}

void to_json(json& j, const thread_start_params& x) {
  j = json::object();
  if (x.cwd) j["cwd"] = *x.cwd;
  if (x.model) j["model"] = *x.model;
  if (x.model_provider) j["modelProvider"] = *x.model_provider;
  if (x.approval_policy_) j["approvalPolicy"] = *x.approval_policy_;
  if (x.approvals_reviewer) j["approvalsReviewer"] = *x.approvals_reviewer;
  if (x.sandbox) j["sandbox"] = *x.sandbox;
  if (x.ephemeral) j["ephemeral"] = *x.ephemeral;
  if (x.base_instructions) j["baseInstructions"] = *x.base_instructions;
  if (x.developer_instructions) j["developerInstructions"] = *x.developer_instructions;
}

void to_json(json& j, const thread_session_response& x) {
  j = json{{"thread", x.thread_},
           {"model", x.model},
           {"modelProvider", x.model_provider},
           {"serviceTier", nullptr},
           {"cwd", x.cwd},
           {"approvalPolicy", x.approval_policy_},
           {"approvalsReviewer", x.approvals_reviewer},
           {"sandbox", x.sandbox},
           {"reasoningEffort", nullptr}};
}

void from_json(const json& j, thread_session_response& x) {
  require_object(j);
  x.thread_ = required<thread>(j, "thread");
  x.model = required<std::string>(j, "model");
  x.model_provider = required<std::string>(j, "modelProvider");
  x.cwd = required<std::string>(j, "cwd");
  x.approval_policy_ = required<approval_policy>(j, "approvalPolicy");
  x.approvals_reviewer = required<std::string>(j, "approvalsReviewer");
  x.sandbox = required<sandbox_policy>(j, "sandbox");
}

// -- thread/read, thread/loaded/list -----------------------------------------------

void from_json(const json& j, thread_read_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.include_turns = optional<bool>(j, "includeTurns").value_or(false);
}

void to_json(json& j, const thread_read_params& x) {
  j = json{{"threadId", x.thread_id}, {"includeTurns", x.include_turns}};
}

void to_json(json& j, const thread_read_response& x) {
  j = json{{"thread", x.thread_}};
}

void from_json(const json& j, thread_read_response& x) {
  require_object(j);
  x.thread_ = required<thread>(j, "thread");
}

void from_json(const json& j, thread_loaded_list_params& x) {
  require_object(j);
  x.cursor = optional<std::string>(j, "cursor");
  x.limit = optional<uint32_t>(j, "limit");
}

void to_json(json& j, const thread_loaded_list_params& x) {
  j = json::object();
  if (x.cursor) j["cursor"] = *x.cursor;
  if (x.limit) j["limit"] = *x.limit;
}

void to_json(json& j, const thread_loaded_list_response& x) {
  j = json{{"data", x.data}, {"nextCursor", or_null(x.next_cursor)}};
}

void from_json(const json& j, thread_loaded_list_response& x) {
  require_object(j);
  x.data = required<std::vector<std::string>>(j, "data");
  x.next_cursor = optional<std::string>(j, "nextCursor");
}

// -- turn/start, turn/interrupt ----------------------------------------------------

void from_json(const json& j, turn_start_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.input = required<std::vector<user_input>>(j, "input");
  x.cwd = optional<std::string>(j, "cwd");
  x.approval_policy_ = optional<approval_policy>(j, "approvalPolicy");
  x.sandbox_policy_ = optional<sandbox_policy>(j, "sandboxPolicy");
  x.model = optional<std::string>(j, "model");
  x.client_user_message_id = optional<std::string>(j, "clientUserMessageId");
  if (auto schema = j.find("outputSchema"); schema != j.end() && !schema->is_null())
    x.output_schema = *schema;
}

void to_json(json& j, const turn_start_params& x) {
  j = json{{"threadId", x.thread_id}, {"input", x.input}};
  if (x.cwd) j["cwd"] = *x.cwd;
  if (x.approval_policy_) j["approvalPolicy"] = *x.approval_policy_;
  if (x.sandbox_policy_) j["sandboxPolicy"] = *x.sandbox_policy_;
  if (x.model) j["model"] = *x.model;
  if (x.client_user_message_id) j["clientUserMessageId"] = *x.client_user_message_id;
}

void to_json(json& j, const turn_start_response& x) {
  j = json{{"turn", x.turn_}};
}

void from_json(const json& j, turn_start_response& x) {
  require_object(j);
  x.turn_ = required<turn>(j, "turn");
}

void from_json(const json& j, thread_turns_list_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.cursor = optional<std::string>(j, "cursor");
  x.limit = optional<uint32_t>(j, "limit");
  if (auto dir = optional<std::string>(j, "sortDirection")) {
    if (*dir != "asc" && *dir != "desc") throw_unknown_variant(*dir, {"asc", "desc"});
    x.ascending = *dir == "asc";
  }
  if (auto view = optional<std::string>(j, "itemsView")) {
    if (*view != "notLoaded" && *view != "summary" && *view != "full")
      throw_unknown_variant(*view, {"notLoaded", "summary", "full"});
    x.items_view = *view;
  }
}

void to_json(json& j, const thread_turns_list_response& x) {
  j = json{{"data", x.data},
           {"nextCursor", or_null(x.next_cursor)},
           {"backwardsCursor", or_null(x.backwards_cursor)}};
}

void from_json(const json& j, turn_steer_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.input = required<std::vector<user_input>>(j, "input");
  x.expected_turn_id = required<std::string>(j, "expectedTurnId");
  x.client_user_message_id = optional<std::string>(j, "clientUserMessageId");
}

void to_json(json& j, const turn_steer_params& x) {
  j = json{{"threadId", x.thread_id}, {"input", x.input}, {"expectedTurnId", x.expected_turn_id}};
  if (x.client_user_message_id) j["clientUserMessageId"] = *x.client_user_message_id;
}

void to_json(json& j, const turn_steer_response& x) {
  j = json{{"turnId", x.turn_id}};
}

void from_json(const json& j, turn_steer_response& x) {
  require_object(j);
  x.turn_id = required<std::string>(j, "turnId");
}

void from_json(const json& j, turn_interrupt_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.turn_id = required<std::string>(j, "turnId");
}

void to_json(json& j, const turn_interrupt_params& x) {
  j = json{{"threadId", x.thread_id}, {"turnId", x.turn_id}};
}

void from_json(const json& j, thread_shell_command_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.command = required<std::string>(j, "command");
  x.timeout_ms = optional<int64_t>(j, "timeoutMs");
}

void to_json(json& j, const thread_shell_command_params& x) {
  j = json{{"threadId", x.thread_id}, {"command", x.command}, {"timeoutMs", or_null(x.timeout_ms)}};
}

// -- bootstrap ---------------------------------------------------------------------

json account_read_result() {
  return json{{"account", nullptr}, {"requiresOpenaiAuth", false}};
}

json model_list_result(const std::string& model_id) {
  return json{
      {"data",
       json::array({{{"id", model_id},
                     {"model", model_id},
                     {"displayName", model_id},
                     {"description", "parley's built-in deterministic scripted model"},
                     {"hidden", false},
                     {"isDefault", true},
                     {"defaultReasoningEffort", "medium"},
                     {"supportedReasoningEfforts",
                      json::array({{{"reasoningEffort", "medium"}, {"description", ""}}})}}})},
      {"nextCursor", nullptr}};
}

json config_read_result() {
  return json{{"config", json::object()}, {"origins", json::object()}};
}

json config_requirements_read_result() {
  return json{{"requirements", nullptr}};
}

}  // namespace parley::protocol

namespace parley::protocol {

namespace {

void read_overrides(const json& j, thread_overrides& x) {
  x.cwd = optional<std::string>(j, "cwd");
  x.model = optional<std::string>(j, "model");
  x.approval_policy_ = optional<approval_policy>(j, "approvalPolicy");
  x.sandbox = optional<sandbox_mode>(j, "sandbox");
  x.approvals_reviewer = optional<std::string>(j, "approvalsReviewer");
}

void write_overrides(json& j, const thread_overrides& x) {
  if (x.cwd) j["cwd"] = *x.cwd;
  if (x.model) j["model"] = *x.model;
  if (x.approval_policy_) j["approvalPolicy"] = *x.approval_policy_;
  if (x.sandbox) j["sandbox"] = *x.sandbox;
  if (x.approvals_reviewer) j["approvalsReviewer"] = *x.approvals_reviewer;
}

}  // namespace

void from_json(const json& j, thread_resume_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.path = optional<std::string>(j, "path");
  if (x.path && x.path->empty()) x.path.reset();  // "" means absent
  x.exclude_turns = optional<bool>(j, "excludeTurns").value_or(false);
  read_overrides(j, x.overrides);
}

void to_json(json& j, const thread_resume_params& x) {
  j = json{{"threadId", x.thread_id}, {"excludeTurns", x.exclude_turns}};
  if (x.path) j["path"] = *x.path;
  write_overrides(j, x.overrides);
}

void from_json(const json& j, thread_fork_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.path = optional<std::string>(j, "path");
  if (x.path && x.path->empty()) x.path.reset();
  x.ephemeral = optional<bool>(j, "ephemeral").value_or(false);
  x.exclude_turns = optional<bool>(j, "excludeTurns").value_or(false);
  x.last_turn_id = optional<std::string>(j, "lastTurnId");
  read_overrides(j, x.overrides);
}

void to_json(json& j, const thread_fork_params& x) {
  j = json{
      {"threadId", x.thread_id}, {"ephemeral", x.ephemeral}, {"excludeTurns", x.exclude_turns}};
  if (x.path) j["path"] = *x.path;
  if (x.last_turn_id) j["lastTurnId"] = *x.last_turn_id;
  write_overrides(j, x.overrides);
}

void from_json(const json& j, thread_list_params& x) {
  require_object(j);
  x.cursor = optional<std::string>(j, "cursor");
  x.limit = optional<uint32_t>(j, "limit");
  if (auto k = optional<std::string>(j, "sortKey")) {
    if (*k != "created_at" && *k != "updated_at" && *k != "recency_at" && *k != "section_position")
      throw_unknown_variant(*k, {"created_at", "updated_at", "recency_at", "section_position"});
    x.sort_key = *k;
  }
  if (auto d = optional<std::string>(j, "sortDirection")) {
    if (*d != "asc" && *d != "desc") throw_unknown_variant(*d, {"asc", "desc"});
    x.sort_direction = *d;
  }
  x.model_providers = optional<std::vector<std::string>>(j, "modelProviders")
                          .value_or(std::vector<std::string>{});
  x.source_kinds
      = optional<std::vector<std::string>>(j, "sourceKinds").value_or(std::vector<std::string>{});
  x.archived = optional<bool>(j, "archived").value_or(false);
  if (auto c = optional<json>(j, "cwd")) {
    if (c->is_string())
      x.cwds = {c->get<std::string>()};
    else
      x.cwds = decode<std::vector<std::string>>(*c);
  }
  x.search_term = optional<std::string>(j, "searchTerm");
  if (x.search_term && x.search_term->empty()) x.search_term.reset();
}

void to_json(json& j, const thread_list_params& x) {
  j = json{{"sortKey", x.sort_key}, {"sortDirection", x.sort_direction}, {"archived", x.archived}};
  if (x.cursor) j["cursor"] = *x.cursor;
  if (x.limit) j["limit"] = *x.limit;
  if (!x.model_providers.empty()) j["modelProviders"] = x.model_providers;
  if (!x.source_kinds.empty()) j["sourceKinds"] = x.source_kinds;
  if (!x.cwds.empty()) j["cwd"] = x.cwds;
  if (x.search_term) j["searchTerm"] = *x.search_term;
}

void to_json(json& j, const thread_list_response& x) {
  j = json{{"data", x.data}, {"nextCursor", or_null(x.next_cursor)}, {"backwardsCursor", nullptr}};
}

void from_json(const json& j, thread_list_response& x) {
  require_object(j);
  x.data = required<std::vector<thread>>(j, "data");
  x.next_cursor = optional<std::string>(j, "nextCursor");
}

void from_json(const json& j, thread_id_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
}

void to_json(json& j, const thread_id_params& x) {
  j = json{{"threadId", x.thread_id}};
}

void from_json(const json& j, thread_name_set_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.name = optional<std::string>(j, "name");
}

void to_json(json& j, const thread_name_set_params& x) {
  j = json{{"threadId", x.thread_id}, {"name", or_null(x.name)}};
}

void to_json(json& j, const thread_unsubscribe_response& x) {
  j = json{{"status", x.status}};
}

}  // namespace parley::protocol
