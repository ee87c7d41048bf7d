#include "protocol/types.hpp"

namespace parley::protocol {

// -- AskForApproval ------------------------------------------------------------

void to_json(json& j, const approval_policy& x) {
  switch (x.value) {
    case approval_policy::kind::untrusted:
      j = "untrusted";
      return;
    case approval_policy::kind::on_request:
      j = "on-request";
      return;
    case approval_policy::kind::never:
      j = "never";
      return;
    case approval_policy::kind::granular:
      j = json{{"granular",
                {{"sandbox_approval", x.granular.sandbox_approval},
                 {"rules", x.granular.rules},
                 {"mcp_elicitations", x.granular.mcp_elicitations},
                 {"request_permissions", x.granular.request_permissions},
                 {"skill_approval", x.granular.skill_approval}}}};
      return;
  }
}

void from_json(const json& j, approval_policy& x) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "untrusted")
      x = approval_policy::untrusted();
    else if (s == "on-request")
      x = approval_policy::on_request();
    else if (s == "never")
      x = approval_policy::never();
    else
      throw_unknown_variant(s, {"untrusted", "on-request", "granular", "never"});
    return;
  }
  if (j.is_object() && j.contains("granular")) {
    const auto& g = j.at("granular");
    require_object(g);
    x.value = approval_policy::kind::granular;
    x.granular.sandbox_approval = required<bool>(g, "sandbox_approval");
    x.granular.rules = required<bool>(g, "rules");
    x.granular.mcp_elicitations = required<bool>(g, "mcp_elicitations");
    x.granular.request_permissions = optional<bool>(g, "request_permissions").value_or(false);
    x.granular.skill_approval = optional<bool>(g, "skill_approval").value_or(false);
    return;
  }
  throw_invalid_type(j, "enum AskForApproval");
}

// -- Sandbox -------------------------------------------------------------------

void to_json(json& j, const sandbox_mode& x) {
  switch (x) {
    case sandbox_mode::read_only:
      j = "read-only";
      return;
    case sandbox_mode::workspace_write:
      j = "workspace-write";
      return;
    case sandbox_mode::danger_full_access:
      j = "danger-full-access";
      return;
  }
}

void from_json(const json& j, sandbox_mode& x) {
  auto s = decode<std::string>(j);
  if (s == "read-only")
    x = sandbox_mode::read_only;
  else if (s == "workspace-write")
    x = sandbox_mode::workspace_write;
  else if (s == "danger-full-access")
    x = sandbox_mode::danger_full_access;
  else
    throw_unknown_variant(s, {"read-only", "workspace-write", "danger-full-access"});
}

sandbox_policy sandbox_policy::from_mode(sandbox_mode m) {
  sandbox_policy p;
  switch (m) {
    case sandbox_mode::read_only:
      p.type = kind::read_only;
      break;
    case sandbox_mode::workspace_write:
      p.type = kind::workspace_write;
      break;
    case sandbox_mode::danger_full_access:
      p.type = kind::danger_full_access;
      break;
  }
  return p;
}

void to_json(json& j, const sandbox_policy& x) {
  switch (x.type) {
    case sandbox_policy::kind::danger_full_access:
      j = json{{"type", "dangerFullAccess"}};
      return;
    case sandbox_policy::kind::read_only:
      j = json{{"type", "readOnly"}, {"networkAccess", x.network_access}};
      return;
    case sandbox_policy::kind::external_sandbox:
      j = json{{"type", "externalSandbox"},
               {"networkAccess", x.network_access ? "enabled" : "restricted"}};
      return;
    case sandbox_policy::kind::workspace_write:
      j = json{{"type", "workspaceWrite"},
               {"writableRoots", x.writable_roots},
               {"networkAccess", x.network_access},
               {"excludeTmpdirEnvVar", x.exclude_tmpdir_env_var},
               {"excludeSlashTmp", x.exclude_slash_tmp}};
      return;
  }
}

void from_json(const json& j, sandbox_policy& x) {
  require_object(j);
  auto type = required<std::string>(j, "type");
  if (type == "dangerFullAccess") {
    x.type = sandbox_policy::kind::danger_full_access;
  } else if (type == "readOnly") {
    x.type = sandbox_policy::kind::read_only;
    x.network_access = optional<bool>(j, "networkAccess").value_or(false);
  } else if (type == "externalSandbox") {
    x.type = sandbox_policy::kind::external_sandbox;
    auto access = optional<std::string>(j, "networkAccess").value_or("restricted");
    if (access != "restricted" && access != "enabled")
      throw_unknown_variant(access, {"restricted", "enabled"});
    x.network_access = access == "enabled";
  } else if (type == "workspaceWrite") {
    x.type = sandbox_policy::kind::workspace_write;
    x.writable_roots =
        optional<std::vector<std::string>>(j, "writableRoots").value_or(std::vector<std::string>{});
    x.network_access = optional<bool>(j, "networkAccess").value_or(false);
    x.exclude_tmpdir_env_var = optional<bool>(j, "excludeTmpdirEnvVar").value_or(false);
    x.exclude_slash_tmp = optional<bool>(j, "excludeSlashTmp").value_or(false);
  } else {
    throw_unknown_variant(type, {"dangerFullAccess", "readOnly", "externalSandbox", "workspaceWrite"});
  }
}

// -- Thread status -------------------------------------------------------------

void to_json(json& j, const thread_status& x) {
  switch (x.type) {
    case thread_status::kind::not_loaded:
      j = json{{"type", "notLoaded"}};
      return;
    case thread_status::kind::idle:
      j = json{{"type", "idle"}};
      return;
    case thread_status::kind::system_error:
      j = json{{"type", "systemError"}};
      return;
    case thread_status::kind::active: {
      auto flags = json::array();
      if (x.waiting_on_approval) flags.push_back("waitingOnApproval");
      if (x.waiting_on_user_input) flags.push_back("waitingOnUserInput");
      j = json{{"type", "active"}, {"activeFlags", std::move(flags)}};
      return;
    }
  }
}

void from_json(const json& j, thread_status& x) {
  require_object(j);
  auto type = required<std::string>(j, "type");
  x = thread_status{};
  if (type == "notLoaded") {
    x.type = thread_status::kind::not_loaded;
  } else if (type == "idle") {
    x.type = thread_status::kind::idle;
  } else if (type == "systemError") {
    x.type = thread_status::kind::system_error;
  } else if (type == "active") {
    x.type = thread_status::kind::active;
    for (auto& f : required<std::vector<std::string>>(j, "activeFlags")) {
      if (f == "waitingOnApproval")
        x.waiting_on_approval = true;
      else if (f == "waitingOnUserInput")
        x.waiting_on_user_input = true;
      else
        throw_unknown_variant(f, {"waitingOnApproval", "waitingOnUserInput"});
    }
  } else {
    throw_unknown_variant(type, {"notLoaded", "idle", "systemError", "active"});
  }
}

// -- Turns ---------------------------------------------------------------------

const char* to_string(turn_status x) {
  switch (x) {
    case turn_status::in_progress:
      return "inProgress";
    case turn_status::completed:
      return "completed";
    case turn_status::interrupted:
      return "interrupted";
    case turn_status::failed:
      return "failed";
  }
  return "failed";
}

void to_json(json& j, const turn_status& x) { j = to_string(x); }

void from_json(const json& j, turn_status& x) {
  auto s = decode<std::string>(j);
  for (auto v : {turn_status::in_progress, turn_status::completed, turn_status::interrupted,
                 turn_status::failed})
    if (s == to_string(v)) {
      x = v;
      return;
    }
  throw_unknown_variant(s, {"completed", "interrupted", "failed", "inProgress"});
}

void to_json(json& j, const turn_error& x) {
  j = json{{"message", x.message},
           {"codexErrorInfo", or_null(x.codex_error_info)},
           {"additionalDetails", or_null(x.additional_details)}};
}

void from_json(const json& j, turn_error& x) {
  require_object(j);
  x.message = required<std::string>(j, "message");
  if (auto info = optional<json>(j, "codexErrorInfo"); info && info->is_string())
    x.codex_error_info = info->get<std::string>();
  x.additional_details = optional<std::string>(j, "additionalDetails");
}

void to_json(json& j, const turn& x) {
  j = json{{"id", x.id},
           {"items", x.items},
           {"status", x.status},
           {"error", x.error ? json(*x.error) : json(nullptr)},
           {"startedAt", or_null(x.started_at)},
           {"completedAt", or_null(x.completed_at)},
           {"durationMs", or_null(x.duration_ms)}};
  if (x.items_view) j["itemsView"] = *x.items_view;
}

void from_json(const json& j, turn& x) {
  require_object(j);
  x.id = required<std::string>(j, "id");
  x.items = required<std::vector<thread_item>>(j, "items");
  x.status = required<turn_status>(j, "status");
  x.error = optional<turn_error>(j, "error");
  x.started_at = optional<int64_t>(j, "startedAt");
  x.completed_at = optional<int64_t>(j, "completedAt");
  x.duration_ms = optional<int64_t>(j, "durationMs");
}

// -- Threads -------------------------------------------------------------------

void to_json(json& j, const git_info& x) {
  j = json{{"sha", or_null(x.sha)}, {"branch", or_null(x.branch)},
           {"originUrl", or_null(x.origin_url)}};
}

void from_json(const json& j, git_info& x) {
  require_object(j);
  x.sha = optional<std::string>(j, "sha");
  x.branch = optional<std::string>(j, "branch");
  x.origin_url = optional<std::string>(j, "originUrl");
}

void to_json(json& j, const thread& x) {
  j = json{{"id", x.id},
           {"sessionId", x.id},
           {"forkedFromId", or_null(x.forked_from_id)},
           {"preview", x.preview},
           {"ephemeral", x.ephemeral},
           {"modelProvider", x.model_provider},
           {"model", or_null(x.model)},
           {"createdAt", x.created_at},
           {"updatedAt", x.updated_at},
           {"status", x.status},
           {"path", or_null(x.path)},
           {"cwd", x.cwd},
           {"cliVersion", x.cli_version},
           {"source", x.source},
           {"projectId", nullptr},
           {"name", or_null(x.name)},
           {"gitInfo", or_null(x.git)},
           {"turns", x.turns}};
}

void from_json(const json& j, thread& x) {
  require_object(j);
  x.id = required<std::string>(j, "id");
  x.preview = required<std::string>(j, "preview");
  x.ephemeral = required<bool>(j, "ephemeral");
  x.model_provider = required<std::string>(j, "modelProvider");
  x.model = optional<std::string>(j, "model");
  x.created_at = required<int64_t>(j, "createdAt");
  x.updated_at = required<int64_t>(j, "updatedAt");
  x.status = required<thread_status>(j, "status");
  x.path = optional<std::string>(j, "path");
  x.cwd = required<std::string>(j, "cwd");
  x.cli_version = required<std::string>(j, "cliVersion");
  if (auto s = optional<json>(j, "source"); s && s->is_string()) x.source = s->get<std::string>();
  x.name = optional<std::string>(j, "name");
  x.forked_from_id = optional<std::string>(j, "forkedFromId");
  x.git = optional<git_info>(j, "gitInfo");
  x.turns = required<std::vector<turn>>(j, "turns");
}

}  // namespace parley::protocol
