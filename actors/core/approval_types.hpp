#pragma once
// The approval pipeline's plain data that core's messages and settings carry:
// what kind of action waits (approval_ask), a stage's answer (the approval
// actor's hook_reply), and an external hook program's configuration
// (runtime_config). They live here so that core includes nothing above it;
// the pipeline's own headers (actors/approval/hooks) build on them. The
// namespace is still the hooks', where they began, so their users read the
// same names.

#include <chrono>
#include <string>
#include <vector>

namespace parley::hooks {

/// A stage's answer. `abstain` passes the approval on to the next stage.
struct verdict {
  enum class kind { allow, deny, abstain };
  kind what = kind::abstain;
  std::string reason;

  static verdict allow(std::string why = {}) { return {kind::allow, std::move(why)}; }
  static verdict deny(std::string why) { return {kind::deny, std::move(why)}; }
  static verdict abstain() { return {kind::abstain, {}}; }
};
const char* to_string(verdict::kind x);

/// What kind of action waits for approval.
enum class action_kind { command, file_change, tool };
const char* to_string(action_kind x);  // "command" | "fileChange" | "tool"

/// One configured hook program (HOME/hooks.json; read and run by
/// actors/approval/hooks/external_hook.hpp).
struct external_hook_spec {
  std::string name;
  std::vector<std::string> argv;
  std::chrono::milliseconds timeout{5000};
  std::vector<action_kind> on;  // which actions it reviews; empty = all

  bool reviews(action_kind k) const;
};

}  // namespace parley::hooks
