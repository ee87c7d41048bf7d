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
      return {"exec_command", arguments.dump(), false, {}};
    }
    case action_kind::shell:
      return {"shell", json{{"command", {"bash", "-lc", a.text}}}.dump(), false, {}};
    case action_kind::patch:
      if (custom_patch) return {"apply_patch", a.text, true, {}};
      return {"apply_patch", json{{"input", a.text}}.dump(), false, {}};
    case action_kind::tool: {
      // `tool NAME` or `tool NAME {JSON arguments}`; NAME may be
      // NAMESPACE/NAME, a call of a tool inside a namespace tool.
      auto space = a.text.find(' ');
      tool_call c{a.text.substr(0, space), space == std::string::npos ? "{}" : a.text.substr(space + 1),
                  false, {}};
      if (auto slash = c.name.find('/'); slash != std::string::npos) {
        c.ns = c.name.substr(0, slash);
        c.name = c.name.substr(slash + 1);
      }
      return c;
    }
    case action_kind::say:
    case action_kind::reason:
      break;
  }
  return {};
}

}  // namespace parley::mock_model
