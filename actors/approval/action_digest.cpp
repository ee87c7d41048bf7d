#include "actors/approval/action_digest.hpp"

#include "actors/approval/audit/sha256.hpp"

namespace parley {

namespace {

/// Length-prefixed, so no two different field lists hash the same bytes.
void field(audit::sha256& h, const std::string& x) {
  h.update(std::to_string(x.size()));
  h.update(":");
  h.update(x);
}

}  // namespace

std::string command_digest(const std::string& command, const std::string& cwd) {
  audit::sha256 h;
  field(h, "command");
  field(h, command);
  field(h, cwd);
  return "sha256:" + audit::to_hex(h.finish());
}

std::string changes_digest(const std::vector<patch::file_change>& changes) {
  audit::sha256 h;
  field(h, "patch");
  for (const auto& c : changes) {
    field(h, std::to_string(static_cast<int>(c.kind)));
    field(h, c.resolved_path);
    field(h, c.resolved_move_to);
    field(h, c.old_content);
    field(h, c.new_content);
  }
  return "sha256:" + audit::to_hex(h.finish());
}

std::string request_digest(const std::string& kind, const std::string& params_json) {
  audit::sha256 h;
  field(h, "request");
  field(h, kind);
  field(h, params_json);
  return "sha256:" + audit::to_hex(h.finish());
}

}  // namespace parley
