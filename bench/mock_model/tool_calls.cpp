#include "bench/mock_model/tool_calls.hpp"

#include <nlohmann/json.hpp>

namespace parley::mock_model {

using json = nlohmann::json;

tool_call tool_call_of(const action& a, bool custom_patch) {
  switch (a.kind) {
    case action_kind::run: {
      // require_escalated makes Codex ask for approval under `on-request` (mock_model.md).
      json arguments = {{"cmd", a.text},
                        {"sandbox_permissions", "require_escalated"},
                        {"justification", "parley benchmark"}};
      return {"exec_command", arguments.dump(), false};
    }
    case action_kind::shell:
      return {"shell", json{{"command", {"bash", "-lc", a.text}}}.dump(), false};
    case action_kind::patch:
      if (custom_patch) return {"apply_patch", a.text, true};
      return {"apply_patch", json{{"input", a.text}}.dump(), false};
    case action_kind::tool: {
      // `tool NAME` or `tool NAME {JSON arguments}`.
      auto space = a.text.find(' ');
      if (space == std::string::npos) return {a.text, "{}", false};
      return {a.text.substr(0, space), a.text.substr(space + 1), false};
    }
    case action_kind::say:
    case action_kind::reason:
      break;
  }
  return {};
}

}  // namespace parley::mock_model
