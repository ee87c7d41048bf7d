#include "actors/threads/turn_actions.hpp"

#include <filesystem>

#include "actors/approval/action_digest.hpp"

namespace parley {

approval_ask command_ask(const turn_settings& settings, const command_step& cmd) {
  approval_ask ask;
  ask.what = hooks::action_kind::command;
  ask.raw_command = cmd.raw;
  ask.thread_id = settings.thread_id;
  ask.tenant = settings.tenant;
  ask.cwd = cmd.item.cwd.empty() ? settings.cwd : cmd.item.cwd;
  ask.command.thread_id = settings.thread_id;
  ask.command.turn_id = settings.turn_id;
  ask.command.item_id = cmd.item.id;
  ask.command.started_at_ms = cmd.started_ms;
  ask.command.command = cmd.item.command;
  ask.command.cwd = cmd.item.cwd;
  ask.command.command_actions = cmd.item.command_actions;
  if (auto words = split_simple_command(cmd.raw))
    ask.command.proposed_execpolicy_amendment = *words;
  // A request to leave the sandbox says why, and an accept of it is bound
  // to running it outside (never replayed as an accept of a confined run).
  if (cmd.escalated) {
    ask.command.reason = cmd.justification.empty()
                             ? std::string{"the model asks to run this outside the sandbox"}
                             : cmd.justification;
    ask.digest = command_digest("[outside the sandbox] " + cmd.raw, settings.cwd);
  } else {
    ask.digest = command_digest(cmd.raw, settings.cwd);
  }
  if (settings.commands_unconfined) {
    auto note = std::string{"parley cannot confine commands on this host: this one would run "
                            "unconfined"};
    ask.command.reason = ask.command.reason ? *ask.command.reason + " (" + note + ")" : note;
  }
  return ask;
}

approval_ask file_change_ask(const turn_settings& settings, const patch_step& p) {
  approval_ask ask;
  ask.what = hooks::action_kind::file_change;
  ask.thread_id = settings.thread_id;
  ask.tenant = settings.tenant;
  ask.cwd = settings.cwd;
  ask.file.thread_id = settings.thread_id;
  ask.file.turn_id = settings.turn_id;
  ask.file.item_id = p.item.id;
  ask.file.started_at_ms = p.started_ms;
  ask.changes = p.item.changes;
  ask.digest = changes_digest(p.planned);
  return ask;
}

std::vector<protocol::file_update_change> describe_changes(
    const std::vector<patch::file_change>& planned) {
  std::vector<protocol::file_update_change> out;
  for (const auto& c : planned) {
    protocol::file_update_change u;
    u.path = c.resolved_path;
    switch (c.kind) {
      case patch::change_kind::add:
        u.type = protocol::file_update_change::kind::add;
        u.diff = c.new_content;
        break;
      case patch::change_kind::remove:
        u.type = protocol::file_update_change::kind::remove;
        u.diff = c.old_content;
        break;
      case patch::change_kind::update:
        u.type = protocol::file_update_change::kind::update;
        if (!c.resolved_move_to.empty()) u.move_path = c.resolved_move_to;
        u.diff = c.unified_diff;
        break;
    }
    out.push_back(std::move(u));
  }
  return out;
}

std::optional<patch_refusal> prepare_patch(const turn_settings& settings, const std::string& text,
                                           patch_step& p) {
  auto parsed = patch::parse(text);
  if (!parsed) return patch_refusal{parsed.error().message, false};
  auto planned = patch::plan(*parsed, settings.cwd, settings.writable_roots);
  if (!planned) return patch_refusal{planned.error().message, planned.error().refused_by_policy()};
  p.planned = std::move(*planned);
  p.item.changes = describe_changes(p.planned);
  return std::nullopt;
}

std::string working_directory(const std::string& cwd, const std::string& workdir) {
  if (workdir.empty()) return cwd;
  if (workdir.front() == '/') return workdir;
  return (std::filesystem::path(cwd) / workdir).lexically_normal().string();
}

step_result outcome(step_result::kind what, std::string detail) {
  step_result r;
  r.what = what;
  r.detail = std::move(detail);
  return r;
}

step_result command_result(const protocol::command_execution_item& item, const exit_info& info) {
  if (!info.not_started.empty()) return outcome(step_result::kind::failed_to_start, info.not_started);
  step_result r;
  r.what = step_result::kind::ran;
  r.exit_code = info.exit_code;
  r.duration_ms = info.duration_ms;
  r.output = item.aggregated_output.value_or("");
  return r;
}

step_result patch_result(const std::vector<patch::file_change>& applied) {
  step_result r;
  r.what = step_result::kind::patch_applied;
  for (const auto& c : applied) {
    char change = c.kind == patch::change_kind::add      ? 'A'
                  : c.kind == patch::change_kind::remove ? 'D'
                                                         : 'M';
    r.files.emplace_back(change, c.move_to.value_or(c.path));
  }
  return r;
}

}  // namespace parley
