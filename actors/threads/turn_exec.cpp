// A turn's running command: started once its start is stored, its output
// streamed as deltas, its exit ending the item.

#include "actors/approval/approval.hpp"
#include "actors/approval/policy.hpp"
#include "actors/core/command_sandbox.hpp"
#include "actors/core/log.hpp"
#include "actors/threads/exec.hpp"
#include "actors/threads/turn_actions.hpp"
#include "actors/threads/turn_detail.hpp"
#include "protocol/ids.hpp"

namespace parley::turn_detail {

using protocol::item_status;

namespace {

/// How the command starts: confined to the turn's sandbox (outside it only
/// as an accepted escalation), with its timeout and limits, in the shell
/// environment policy's environment (API keys and tokens stay out of what
/// a model runs).
exec_request exec_request_of(const turn_state& st, const command_step& cmd) {
  static const sandbox_settings unconfigured;
  const auto& config = *st.svc.config;
  const auto& sandbox = config.sandbox ? *config.sandbox : unconfigured;
  exec_request r;
  r.spec.cwd = cmd.item.cwd;
  r.spec.env = config.command_environment;
  r.timeout = command_timeout(sandbox.limits, cmd.timeout_ms);
  // What an approval accepted runs as approved: outside the sandbox (every
  // approval is a request to leave it; an escalation never runs unasked).
  // What ran without one stays inside.
  auto launch = command_argv(sandbox, st.settings.sandbox, cmd.item.cwd, cmd.raw, cmd.approved,
                             config.command_environment.get(), &st.settings.granted);
  if (auto* refused = std::get_if<launch_refusal>(&launch))
    r.refusal = std::move(refused->reason);
  else
    r.spec.argv = std::move(std::get<command_launch>(launch).argv);
  return r;
}

/// A confined command that the sandbox seems to have refused, under a
/// policy that offers it (untrusted, granular with sandbox_approval): a
/// person may let it run again outside. Never what an approval let out
/// already, nor what a limit of parley's ended.
bool offers_retry_outside(const turn_state& st, const command_step& cmd, const exit_info& info) {
  return !st.settings.shell && !cmd.approved && !cmd.escalated && info.ended_by.empty() && info.not_started.empty()
         && asks_to_retry_outside(st.settings.policy)
         && place_of(st.settings.sandbox, st.settings.commands_unconfined)
                == command_place::confined
         && looks_refused_by_sandbox(info.exit_code, cmd.item.aggregated_output.value_or(""));
}

/// Asks to run the refused command again outside the sandbox: the same item
/// (its first run's output and exit code stay on it if the answer is no), now
/// an escalation, stored as asked like any other, so a restart asks again.
void ask_to_retry_outside(self_ptr self, const exit_info& info) {
  auto& st = self->state;
  auto& cmd = *st.command;
  cmd.escalated = true;
  cmd.justification = "the sandbox refused this command (exit code " + std::to_string(info.exit_code)
                      + "): run it again outside the sandbox?";
  PARLEY_INFO("turn {} event=sandbox_refused item={} exit_code={} asks=retry_outside",
              st.settings.turn_id, cmd.item.id, info.exit_code);
  auto ask = command_ask(st.settings, cmd);
  st.action = action_of(st, cmd, ask.digest);
  auto plan = plan_for(st.svc, st.settings.grants, ask, policy_verdict::ask);
  follow_plan(self, std::move(ask), std::move(plan), nullptr, [self] {
    self->state.command->approved = true;  // a grant or a rule accepted it
    start_exec(self);
  });
}

/// Spawns the runner of the command in progress (linked: it dies with the
/// turn and takes the process group with it).
void spawn_runner(self_ptr self) {
  auto& st = self->state;
  auto& cmd = *st.command;
  cmd.output.emplace(st.svc.config->output_cap_bytes);
  auto runner = self->spawn<caf::linked>(exec, caf::actor_cast<process_sink_actor>(self),
                                         exec_request_of(st, cmd), st.svc.reactor,
                                         st.svc.telemetry);
  cmd.exec_addr = runner.address();
}

}  // namespace

/// Runs the command, once its start is stored (never twice: see
/// record_started).
void start_exec(self_ptr self) {
  record_started(self, [self] { spawn_runner(self); });
}

/// The user's own command: shown as Codex shows it (source userShell, its
/// text as one unknown action), confined to the thread's sandbox like any
/// command that needs no approval. Nothing asks: the user typed it. No
/// action is stored: a restart does not run it again (the turn ends
/// interrupted, as any turn the server died in).
void run_user_shell(self_ptr self) {
  auto& st = self->state;
  const auto& shell = *st.settings.shell;
  command_step cmd;
  cmd.item.id = protocol::new_uuid_v7();
  cmd.item.command = display_command(shell.command);
  cmd.item.cwd = st.settings.cwd;
  cmd.item.source = "userShell";
  protocol::command_action action;
  action.command = shell.command;
  cmd.item.command_actions = {std::move(action)};
  cmd.raw = shell.command;
  cmd.timeout_ms = shell.timeout_ms;
  cmd.started_ms = protocol::unix_ms();
  item_started(self, cmd.item, cmd.started_ms);
  st.command = std::move(cmd);
  PARLEY_INFO("turn {} event=user_shell item={}", st.settings.turn_id, st.command->item.id);
  spawn_runner(self);
}

/// A chunk of the running command's output, streamed as a delta.
void on_output(self_ptr self, const std::string& chunk) {
  auto& st = self->state;
  if (!st.command || !st.command->output) return;
  auto delta = st.command->output->add(chunk);
  if (delta.empty()) return;
  auto& s = st.settings;
  emit(self, protocol::command_output_delta{s.thread_id, s.turn_id, st.command->item.id,
                                            std::move(delta)});
}

/// The command ended: its last output, then the item, then the next step.
void on_exited(self_ptr self, const exit_info& info) {
  auto& st = self->state;
  if (!st.command || !st.command->output) return;
  auto& cmd = *st.command;
  cmd.exec_addr = caf::actor_addr{};
  if (auto tail = cmd.output->finish(); !tail.empty()) {
    auto& s = st.settings;
    emit(self,
         protocol::command_output_delta{s.thread_id, s.turn_id, cmd.item.id, std::move(tail)});
  }
  cmd.item.aggregated_output = cmd.output->aggregated();
  // The limit that ended it is the output's last line, for the client and
  // the model alike.
  std::string note;
  if (!info.ended_by.empty()) {
    note = "\nparley: the command " + info.ended_by + "; its processes were killed\n";
  } else if (info.not_started.empty()) {
    static const command_limits no_limits{};
    const auto& limits = st.svc.config->sandbox ? st.svc.config->sandbox->limits : no_limits;
    auto why = limit_that_stopped(limits, info.exit_code, *cmd.item.aggregated_output);
    if (!why.empty()) note = "\nparley: the command " + why + "\n";
  }
  if (!note.empty()) {
    emit(self, protocol::command_output_delta{st.settings.thread_id, st.settings.turn_id,
                                              cmd.item.id, note});
    *cmd.item.aggregated_output += note;
  }
  cmd.item.exit_code = info.exit_code;
  cmd.item.duration_ms = info.duration_ms;
  if (info.pid > 0) cmd.item.process_id = std::to_string(info.pid);
  cmd.output.reset();
  if (offers_retry_outside(st, cmd, info)) return ask_to_retry_outside(self, info);
  auto told = command_result(cmd.item, info);
  complete_current(self, info.exit_code == 0 ? item_status::completed : item_status::failed,
                   std::move(told));
  if (st.settings.shell) return end_turn(self, protocol::turn_status::completed);
  next_step(self);
}

}  // namespace parley::turn_detail
