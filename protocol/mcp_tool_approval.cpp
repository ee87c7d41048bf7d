#include "protocol/mcp_tool_approval.hpp"

#include <algorithm>
#include <vector>

namespace parley::protocol {

namespace {

constexpr const char* question_prefix = "mcp_tool_call_approval_";
// The labels Codex's question offers (an answer may name them).
constexpr const char* label_session = "Allow for this session";
constexpr const char* label_remember = "Allow and don't ask me again";
constexpr const char* label_decline = "__codex_mcp_decline__";

/// A hint as the tool listed it: true, false or not given.
std::optional<bool> hint(const json& annotations, const char* name) {
  if (!annotations.is_object()) return std::nullopt;
  auto i = annotations.find(name);
  if (i == annotations.end() || !i->is_boolean()) return std::nullopt;
  return i->get<bool>();
}

/// Whether the annotations say the tool may change the world.
bool may_change_world(const json& annotations) {
  auto destructive = hint(annotations, "destructiveHint");
  if (destructive == true) return true;
  if (hint(annotations, "readOnlyHint").value_or(false)) return false;
  return destructive.value_or(true) || hint(annotations, "openWorldHint").value_or(true);
}

bool full_access(const approval_policy& policy, const sandbox_policy& sandbox) {
  using sk = sandbox_policy::kind;
  return policy.value == approval_policy::kind::never
         && (sandbox.type == sk::danger_full_access || sandbox.type == sk::external_sandbox);
}

/// The answers an accept's content gives the question (strings).
std::vector<std::string> answers_of(const json& content, const std::string& call_id) {
  std::vector<std::string> out;
  if (!content.is_object()) return out;
  auto i = content.find(question_prefix + call_id);
  if (i == content.end()) return out;
  if (i->is_string()) out.push_back(i->get<std::string>());
  if (i->is_array())
    for (const auto& a : *i)
      if (a.is_string()) out.push_back(a.get<std::string>());
  return out;
}

}  // namespace

const char* to_string(mcp_approval_mode x) {
  switch (x) {
    case mcp_approval_mode::automatic:
      return "auto";
    case mcp_approval_mode::prompt:
      return "prompt";
    case mcp_approval_mode::approve:
      return "approve";
  }
  return "auto";
}

std::optional<mcp_approval_mode> mcp_approval_mode_of(const std::string& text) {
  if (text == "auto") return mcp_approval_mode::automatic;
  if (text == "prompt") return mcp_approval_mode::prompt;
  if (text == "approve") return mcp_approval_mode::approve;
  return std::nullopt;
}

const char* to_string(mcp_call_gate x) {
  switch (x) {
    case mcp_call_gate::run:
      return "run";
    case mcp_call_gate::ask:
      return "ask";
    case mcp_call_gate::refuse:
      return "refuse";
  }
  return "refuse";
}

mcp_call_gate mcp_call_gate_of(const json& annotations, mcp_approval_mode mode,
                               const approval_policy& policy, const sandbox_policy& sandbox) {
  if (full_access(policy, sandbox)) return mcp_call_gate::run;
  if (mode == mcp_approval_mode::approve) return mcp_call_gate::run;
  // No annotations at all say nothing: the tool may change the world.
  bool needs = mode == mcp_approval_mode::prompt || may_change_world(annotations);
  if (!needs) return mcp_call_gate::run;
  return policy.value == approval_policy::kind::never ? mcp_call_gate::refuse
                                                      : mcp_call_gate::ask;
}

bool elicitations_rejected(const approval_policy& policy) {
  using k = approval_policy::kind;
  return policy.value == k::never
         || (policy.value == k::granular && !policy.granular.mcp_elicitations);
}

bool mcp_session_approval_offered(mcp_approval_mode mode) {
  return mode == mcp_approval_mode::automatic;
}

std::string mcp_approval_message(const std::string& server, const std::string& tool) {
  return "Allow the " + server + " MCP server to run tool \"" + tool + "\"?";
}

json mcp_approval_request_params(const mcp_approval_subject& s) {
  json meta = {{"codex_approval_kind", "mcp_tool_call"}};
  if (mcp_session_approval_offered(s.mode)) meta["persist"] = {"session", "always"};
  meta["tool_name"] = s.tool;
  if (s.annotations.is_object()) meta["tool_annotations"] = s.annotations;
  if (!s.title.empty()) meta["tool_title"] = s.title;
  if (!s.description.empty()) meta["tool_description"] = s.description;
  if (!s.arguments.is_null()) meta["tool_params"] = s.arguments;
  if (s.arguments.is_object()) {
    // Each argument by name, in name order (nlohmann's objects are sorted).
    json display = json::array();
    for (auto it = s.arguments.begin(); it != s.arguments.end(); ++it)
      display.push_back({{"name", it.key()}, {"value", it.value()}, {"display_name", it.key()}});
    meta["tool_params_display"] = std::move(display);
  }
  return {{"threadId", s.thread_id},
          {"turnId", s.turn_id},
          {"serverName", s.server},
          {"mode", "form"},
          {"_meta", std::move(meta)},
          {"message", mcp_approval_message(s.server, s.tool)},
          {"requestedSchema", {{"type", "object"}, {"properties", json::object()}}}};
}

const char* to_string(mcp_approval_answer x) {
  switch (x) {
    case mcp_approval_answer::accept:
      return "accept";
    case mcp_approval_answer::accept_for_session:
      return "acceptForSession";
    case mcp_approval_answer::accept_always:
      return "acceptAlways";
    case mcp_approval_answer::decline:
      return "decline";
    case mcp_approval_answer::cancel:
      return "cancel";
  }
  return "cancel";
}

mcp_approval_answer decode_mcp_approval_answer(const json& answer, const std::string& call_id,
                                               mcp_approval_mode mode) {
  if (!answer.is_object()) return mcp_approval_answer::cancel;
  auto action = answer.value("action", json());
  if (action == "decline") return mcp_approval_answer::decline;
  if (action != "accept") return mcp_approval_answer::cancel;
  // `_meta.persist` first, then the question's labels, as Codex reads them.
  auto chosen = mcp_approval_answer::accept;
  auto meta = answer.value("_meta", json());
  auto persist = meta.is_object() ? meta.value("persist", json()) : json();
  if (persist == "session") {
    chosen = mcp_approval_answer::accept_for_session;
  } else if (persist == "always") {
    chosen = mcp_approval_answer::accept_always;
  } else {
    auto answers = answers_of(answer.value("content", json()), call_id);
    auto has = [&](const char* label) {
      return std::find(answers.begin(), answers.end(), label) != answers.end();
    };
    if (has(label_decline)) return mcp_approval_answer::decline;
    if (has(label_session))
      chosen = mcp_approval_answer::accept_for_session;
    else if (has(label_remember))
      chosen = mcp_approval_answer::accept_always;
  }
  // Only a tool in `auto` mode is remembered (Codex's normalization).
  return mcp_session_approval_offered(mode) ? chosen : mcp_approval_answer::accept;
}

}  // namespace parley::protocol
