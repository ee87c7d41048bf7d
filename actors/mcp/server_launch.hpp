#pragma once
// The argv that starts a stdio MCP server: its command through
// parley-sandbox, confined as its [mcp_servers.NAME] table says
// (actors/model/config/mcp_servers.hpp), or a refusal when it must be
// confined and this host cannot confine it.
//
// A server is a command like any other, so it gets what a turn's command
// gets: parley's home and secrets hidden, the per-command memory and process
// limits. Not the CPU time limit: that is per process and a server lives as
// long as parley.

#include <string>
#include <variant>
#include <vector>

#include "actors/core/command_sandbox.hpp"
#include "actors/model/config/mcp_servers.hpp"

namespace parley::mcp {

/// `settings` null: nothing confines (the server runs as configured).
/// `env` is the server's whole environment (its TMPDIR stays writable).
std::variant<command_launch, launch_refusal> server_launch(const model_config::mcp_server& config,
                                                           const sandbox_settings* settings,
                                                           const std::vector<std::string>& env);

/// In words, for the log: "workspace-write, network on" or "unconfined".
std::string describe_confinement(const model_config::mcp_server& config,
                                 const command_launch& launch);

}  // namespace parley::mcp
