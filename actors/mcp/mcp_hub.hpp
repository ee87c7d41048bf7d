#pragma once
// The MCP servers of one parley process: one actor per configured server
// (mcp_server.hpp), their latest statuses, and the client methods over them.
// Servers are process-wide config, not a tenant's: any authenticated client
// may list and call them (README, MCP servers).
//
// Requests (JSON as text; errors as caf::error with a client's message):
//   (atom::call, method, params) -> result, for
//     "mcpServerStatus/list"     ListMcpServerStatusParams -> ListMcpServerStatusResponse
//     "mcpServer/tool/call"      McpServerToolCallParams   -> McpServerToolCallResponse
//     "mcpServer/resource/read"  McpResourceReadParams     -> McpResourceReadResponse
//     "config/mcpServer/reload"  (none)                    -> {}: config.toml read again;
//                                servers added, removed or changed start or stop
//     "mcpToolCall"              a model's call, from its turn: {server, tool,
//                                arguments, progressToken} -> CallToolResult; the
//                                turn hears (parley::atom::mcp_progress, token, line)
//     "mcpToolApproval/persist"  a model's call accepted "always", from its turn:
//                                {server, tool} -> {}: config.toml gets the tool's
//                                approval_mode = "approve", and the offer with it
//   (parley::atom::mcp_tools, known generation) -> (generation, tools JSON or "")
//   (parley::atom::mcp_cancel, server, progressToken): a turn gave its call up
// (core/services.hpp, mcp_port, says what a turn sees of these.)
//
// Subscriptions: (atom::subscribe, actor) from a client connection; it then
// gets (atom::startup, params) at each change of a server's startup state,
// the params of `mcpServer/startupStatus/updated` (McpServerStatusUpdatedNotification:
// starting, ready, failed with its error, cancelled when a reload stops a
// server still starting; threadId null: servers are the process's), until
// it goes down.
//
// Spawned detached: a reload reads config.toml on the hub's own thread,
// never on a scheduler's.

#include <atomic>
#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <memory>
#include <string>
#include <vector>

#include "actors/core/command_sandbox.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/model/config/mcp_servers.hpp"

namespace parley::mcp {

struct hub_options {
  /// The servers of the config read at start.
  model_config::mcp_servers servers;
  /// What a reload reads: the file (a missing one at the default path
  /// means no servers) with the -c overrides.
  std::string config_file;
  bool config_file_given = false;
  std::vector<std::string> config_overrides;
  std::string client_version;
  /// parley's environment ("NAME=value"); empty: read from `environ`.
  std::vector<std::string> parent_environment;
  /// How each stdio server is confined (the runtime's sandbox settings).
  std::shared_ptr<const sandbox_settings> sandbox;
  /// Bumped whenever the tools offered to models change (turns read it).
  std::shared_ptr<std::atomic<uint64_t>> tools_generation;
  /// The runtime's thread manager: where the servers' elicitations go. The
  /// hub is spawned before it (every turn reaches the hub), so the runtime
  /// hands it over with (atom::threads, manager) once it exists.
  thread_manager_actor threads;
};

caf::actor spawn_hub(caf::actor_system& system, hub_options options);

}  // namespace parley::mcp
