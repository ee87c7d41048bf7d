#include "actors/mcp/server_launch.hpp"

#include "protocol/types.hpp"

namespace parley::mcp {

std::variant<command_launch, launch_refusal> server_launch(const model_config::mcp_server& config,
                                                           const sandbox_settings* settings,
                                                           const std::vector<std::string>& env) {
  std::vector<std::string> program{config.command};
  program.insert(program.end(), config.args.begin(), config.args.end());
  if (!settings) return command_launch{program, true};
  using mode = model_config::mcp_server::sandbox;
  using kind = protocol::sandbox_policy::kind;
  protocol::sandbox_policy policy;
  policy.type = config.sandbox_mode == mode::read_only            ? kind::read_only
                : config.sandbox_mode == mode::danger_full_access ? kind::danger_full_access
                                                                  : kind::workspace_write;
  policy.network_access = config.sandbox_network;
  policy.writable_roots = config.sandbox_writable_roots;
  auto server_settings = *settings;
  server_settings.limits.max_cpu_seconds = 0;
  // The launch's cwd is only what workspace-write makes writable: the
  // server's own cwd when the table names one. parley's cwd (where a server
  // without one runs) may be anything, "/" included: /tmp stands in for it.
  auto writable_cwd = config.cwd.empty() ? std::string{"/tmp"} : absolute_path(config.cwd);
  return program_argv(server_settings, policy, writable_cwd, program, &env);
}

std::string describe_confinement(const model_config::mcp_server& config,
                                 const command_launch& launch) {
  if (launch.unconfined) return "unconfined";
  using mode = model_config::mcp_server::sandbox;
  std::string out = config.sandbox_mode == mode::read_only ? "read-only" : "workspace-write";
  out += config.sandbox_network ? ", network on" : ", network off";
  return out;
}

}  // namespace parley::mcp
