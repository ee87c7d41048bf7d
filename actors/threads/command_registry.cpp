// The command_registry: starts command/exec processes (deciding their
// sandbox, environment, timeout and cap) and routes write/terminate/resize
// to them by (client, processId).

#include <map>

#include "actors/core/command_sandbox.hpp"
#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "actors/threads/command_exec.hpp"
#include "actors/threads/process_reactor.hpp"
#include "actors/threads/thread_manager.hpp"

extern char** environ;

namespace parley {

namespace command_registry_detail {

using registry_self = command_registry_actor::stateful_pointer<command_registry_state>;

/// The server's command environment with the request's overrides.
std::shared_ptr<const std::vector<std::string>> environment_of(
    const runtime_config& config, const protocol::command_exec_params& p) {
  std::map<std::string, std::string> env;
  auto take = [&env](const std::string& entry) {
    auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  };
  if (config.command_environment) {
    for (const auto& e : *config.command_environment) take(e);
  } else {
    for (char** e = environ; e && *e; ++e) take(*e);
  }
  // A terminal needs a TERM to be of use (full-screen programs, colours).
  if (p.tty && env.count("TERM") == 0) env["TERM"] = "xterm-256color";
  for (const auto& [name, value] : p.env) {
    if (value)
      env[name] = *value;
    else
      env.erase(name);
  }
  auto out = std::make_shared<std::vector<std::string>>();
  out->reserve(env.size());
  for (auto& [name, value] : env) out->push_back(name + "=" + value);
  return out;
}

/// timeoutMs (0: at once), else the server's default; disableTimeout: the
/// operator's maximum still binds (no command outlives --command-max-timeout).
std::chrono::milliseconds timeout_of(const command_limits& limits,
                                     const protocol::command_exec_params& p) {
  if (p.disable_timeout) return limits.max_timeout;
  if (p.timeout_ms && *p.timeout_ms == 0) return std::chrono::milliseconds{0};
  return command_timeout(limits, p.timeout_ms.value_or(0));
}

caf::error unknown_process(const std::string& id) {
  return make_error(errc::invalid_request, "no active command/exec for process id \"" + id + "\"");
}

caf::result<protocol::command_exec_response> start(registry_self self,
                                                   protocol::command_exec_params& p,
                                                   client_actor& client) {
  auto& svc = self->state.svc;
  const auto& config = *svc.config;
  if (p.process_id && self->state.running.count({client.address(), *p.process_id}) != 0)
    return make_error(errc::invalid_request,
                      "duplicate active command/exec process id: \"" + *p.process_id + "\"");
  auto cwd = resolve_cwd(p.cwd, config.default_cwd);
  if (!cwd) return make_error(errc::internal, "failed to spawn command: " + message_of(cwd.error()));
  static const sandbox_settings unconfigured;
  const auto& sandbox = config.sandbox ? *config.sandbox : unconfigured;
  // The server's default, as for a thread that names none.
  auto policy = p.sandbox.value_or(
      protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write));
  auto env = environment_of(config, p);
  auto launch = program_argv(sandbox, policy, *cwd, p.command, env.get());
  if (auto* refused = std::get_if<launch_refusal>(&launch))
    return make_error(errc::internal, "failed to spawn command: " + refused->reason);
  spawn_spec spec;
  spec.argv = std::move(std::get<command_launch>(launch).argv);
  spec.cwd = *cwd;
  spec.env = env;
  spec.separate_stderr = !p.tty;
  spec.stdin_pipe = p.stream_stdin && !p.tty;
  if (p.tty) {
    auto size = p.size.value_or(protocol::terminal_size{});
    spec.pty = std::make_pair(size.rows, size.cols);
  }
  command_exec_setup setup;
  setup.client = client;
  setup.registry = self;
  setup.process_id = p.process_id.value_or("");
  setup.stream_output = p.stream_stdout_stderr;
  setup.stream_stdin = p.stream_stdin;
  setup.tty = p.tty;
  setup.timeout = timeout_of(sandbox.limits, p);
  if (!p.disable_output_cap) setup.cap = p.output_bytes_cap.value_or(config.output_cap_bytes);
  PARLEY_DEBUG("command_exec event=start process_id=\"{}\" argv0=\"{}\" tty={} stream={}",
               setup.process_id, spec.argv.front(), p.tty, p.stream_stdout_stderr);
  auto cmd = self->spawn<caf::linked + caf::monitored>(command_exec, std::move(setup),
                                                       std::move(spec), svc);
  self->state.children.insert(cmd.address());
  if (p.process_id) self->state.running.emplace(std::make_pair(client.address(), *p.process_id), cmd);
  return self->delegate(cmd, atom::exec_start::value);
}

void forget(registry_self self, const caf::actor_addr& cmd) {
  self->state.children.erase(cmd);
  auto& running = self->state.running;
  for (auto i = running.begin(); i != running.end(); ++i)
    if (i->second.address() == cmd) {
      running.erase(i);
      return;
    }
}

}  // namespace command_registry_detail

command_registry_actor::behavior_type command_registry(
    command_registry_actor::stateful_pointer<command_registry_state> self, runtime_services svc) {
  using namespace command_registry_detail;
  install_default_handlers(self, "command_registry");
  self->state.svc = std::move(svc);
  self->set_down_handler([self](caf::down_msg& dm) { forget(self, dm.source); });
  // A command that failed takes only itself down; the thread manager's exit
  // (the link) takes the registry and every command with it.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    // A command that ended normally (its exec_gone may have come first).
    if (msg.reason == caf::exit_reason::normal) return forget(self, msg.source);
    if (self->state.children.count(msg.source) != 0) {
      PARLEY_WARN("command_registry event=command_failed reason={}", caf::to_string(msg.reason));
      forget(self, msg.source);
      return;
    }
    self->quit(msg.reason);
  });
  auto find = [self](const client_actor& client,
                     const std::string& id) -> caf::expected<command_exec_actor> {
    auto i = self->state.running.find({client.address(), id});
    if (i == self->state.running.end()) return unknown_process(id);
    return i->second;
  };
  return {
      [self](atom::exec_start, protocol::command_exec_params& p,
             client_actor& client) -> caf::result<protocol::command_exec_response> {
        return start(self, p, client);
      },
      [self, find](atom::exec_write, const std::string& id, std::string& bytes, bool close,
                   const client_actor& client) -> caf::result<atom::ok> {
        auto cmd = find(client, id);
        if (!cmd) return std::move(cmd.error());
        return self->delegate(*cmd, atom::exec_write::value, std::move(bytes), close);
      },
      [self, find](atom::exec_kill, const std::string& id,
                   const client_actor& client) -> caf::result<atom::ok> {
        auto cmd = find(client, id);
        if (!cmd) return std::move(cmd.error());
        return self->delegate(*cmd, atom::exec_kill::value);
      },
      [self, find](atom::exec_resize, const std::string& id, const protocol::terminal_size& size,
                   const client_actor& client) -> caf::result<atom::ok> {
        auto cmd = find(client, id);
        if (!cmd) return std::move(cmd.error());
        return self->delegate(*cmd, atom::exec_resize::value, size);
      },
      [self](atom::exec_gone, const caf::actor_addr& cmd) { forget(self, cmd); },
  };
}

}  // namespace parley
