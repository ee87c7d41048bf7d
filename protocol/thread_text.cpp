#include "protocol/thread_text.hpp"

#include "protocol/item_text.hpp"
#include "protocol/notification_text.hpp"

namespace parley::protocol {

// Named, not anonymous: unique in the unity build.
namespace thread_text_detail {

const char* boolean(bool b) { return b ? "true" : "false"; }

bool append_git(std::string& out, const git_info& x) {
  append_key(out += '{', "branch");
  if (!append_string_or_null(out, x.branch)) return false;
  append_key(out += ',', "originUrl");
  if (!append_string_or_null(out, x.origin_url)) return false;
  append_key(out += ',', "sha");
  if (!append_string_or_null(out, x.sha)) return false;
  out += '}';
  return true;
}

}  // namespace thread_text_detail

bool append_thread_status(std::string& out, const thread_status& x) {
  switch (x.type) {
    case thread_status::kind::not_loaded: out += R"({"type":"notLoaded"})"; return true;
    case thread_status::kind::idle: out += R"({"type":"idle"})"; return true;
    case thread_status::kind::system_error: out += R"({"type":"systemError"})"; return true;
    case thread_status::kind::active:
      out += R"({"activeFlags":[)";
      if (x.waiting_on_approval) out += R"("waitingOnApproval")";
      if (x.waiting_on_approval && x.waiting_on_user_input) out += ',';
      if (x.waiting_on_user_input) out += R"("waitingOnUserInput")";
      out += R"(],"type":"active"})";
      return true;
  }
  return false;
}

bool append_thread(std::string& out, const thread& x) {
  using namespace thread_text_detail;
  append_key(out += '{', "cliVersion");
  if (!append_json_string(out, x.cli_version)) return false;
  append_key(out += ',', "createdAt");
  out += std::to_string(x.created_at);
  append_key(out += ',', "cwd");
  if (!append_json_string(out, x.cwd)) return false;
  append_key(out += ',', "ephemeral");
  out += boolean(x.ephemeral);
  append_key(out += ',', "forkedFromId");
  if (!append_string_or_null(out, x.forked_from_id)) return false;
  append_key(out += ',', "gitInfo");
  if (!x.git)
    out += "null";
  else if (!append_git(out, *x.git))
    return false;
  append_key(out += ',', "id");
  if (!append_json_string(out, x.id)) return false;
  append_key(out += ',', "model");
  if (!append_string_or_null(out, x.model)) return false;
  append_key(out += ',', "modelProvider");
  if (!append_json_string(out, x.model_provider)) return false;
  append_key(out += ',', "name");
  if (!append_string_or_null(out, x.name)) return false;
  append_key(out += ',', "path");
  if (!append_string_or_null(out, x.path)) return false;
  append_key(out += ',', "preview");
  if (!append_json_string(out, x.preview)) return false;
  out += R"(,"projectId":null)";
  append_key(out += ',', "sessionId");  // the thread's id, as Codex writes it
  if (!append_json_string(out, x.id)) return false;
  append_key(out += ',', "source");
  if (!append_json_string(out, x.source)) return false;
  append_key(out += ',', "status");
  if (!append_thread_status(out, x.status)) return false;
  append_key(out += ',', "turns");
  out += '[';
  for (size_t i = 0; i < x.turns.size(); ++i) {
    if (i > 0) out += ',';
    if (!append_turn(out, x.turns[i])) return false;
  }
  out += ']';
  append_key(out += ',', "updatedAt");
  out += std::to_string(x.updated_at);
  out += '}';
  return true;
}

bool append_sandbox_policy(std::string& out, const sandbox_policy& x) {
  using namespace thread_text_detail;
  switch (x.type) {
    case sandbox_policy::kind::danger_full_access:
      out += R"({"type":"dangerFullAccess"})";
      return true;
    case sandbox_policy::kind::read_only:
      append_key(out += '{', "networkAccess");
      out += boolean(x.network_access);
      out += R"(,"type":"readOnly"})";
      return true;
    case sandbox_policy::kind::external_sandbox:
      append_key(out += '{', "networkAccess");
      out += x.network_access ? R"("enabled")" : R"("restricted")";
      out += R"(,"type":"externalSandbox"})";
      return true;
    case sandbox_policy::kind::workspace_write:
      append_key(out += '{', "excludeSlashTmp");
      out += boolean(x.exclude_slash_tmp);
      append_key(out += ',', "excludeTmpdirEnvVar");
      out += boolean(x.exclude_tmpdir_env_var);
      append_key(out += ',', "networkAccess");
      out += boolean(x.network_access);
      out += R"(,"type":"workspaceWrite")";
      append_key(out += ',', "writableRoots");
      if (!append_string_array(out, x.writable_roots)) return false;
      out += '}';
      return true;
  }
  return false;
}

bool append_approval_policy(std::string& out, const approval_policy& x) {
  using namespace thread_text_detail;
  switch (x.value) {
    case approval_policy::kind::untrusted: out += R"("untrusted")"; return true;
    case approval_policy::kind::on_request: out += R"("on-request")"; return true;
    case approval_policy::kind::never: out += R"("never")"; return true;
    case approval_policy::kind::granular: {
      const auto& g = x.granular;
      append_key(out += "{\"granular\":{", "mcp_elicitations");
      out += boolean(g.mcp_elicitations);
      append_key(out += ',', "request_permissions");
      out += boolean(g.request_permissions);
      append_key(out += ',', "rules");
      out += boolean(g.rules);
      append_key(out += ',', "sandbox_approval");
      out += boolean(g.sandbox_approval);
      append_key(out += ',', "skill_approval");
      out += boolean(g.skill_approval);
      out += "}}";
      return true;
    }
  }
  return false;
}

bool append_result(std::string& out, const thread_session_response& x) {
  append_key(out += '{', "approvalPolicy");
  if (!append_approval_policy(out, x.approval_policy_)) return false;
  append_key(out += ',', "approvalsReviewer");
  if (!append_json_string(out, x.approvals_reviewer)) return false;
  append_key(out += ',', "cwd");
  if (!append_json_string(out, x.cwd)) return false;
  append_key(out += ',', "model");
  if (!append_json_string(out, x.model)) return false;
  append_key(out += ',', "modelProvider");
  if (!append_json_string(out, x.model_provider)) return false;
  out += R"(,"reasoningEffort":null)";
  append_key(out += ',', "sandbox");
  if (!append_sandbox_policy(out, x.sandbox)) return false;
  out += R"(,"serviceTier":null)";
  append_key(out += ',', "thread");
  if (!append_thread(out, x.thread_)) return false;
  out += '}';
  return true;
}

bool append_result(std::string& out, const turn_start_response& x) {
  append_key(out += '{', "turn");
  if (!append_turn(out, x.turn_)) return false;
  out += '}';
  return true;
}

}  // namespace parley::protocol
