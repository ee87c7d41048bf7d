#pragma once
// One configured MCP server as an actor: it runs the server (a stdio child),
// performs MCP's handshake (initialize, notifications/initialized), lists
// the tools (every page, filtered by enabled_tools/disabled_tools) and the
// resources, then serves tools/call and resources/read for clients. It
// tells the hub its status whenever that changes.
//
// Failure, by cause:
//   - the process ends (crash, kill, a failed exec): calls in flight fail
//     naming it, and the server starts again after a backoff (0.5 s,
//     doubling, at most 30 s; back to 0.5 s once a start stayed up 10 s);
//   - the server breaks the protocol (a line past 16 MiB, a line that is
//     not JSON-RPC 2.0, a failed or unsupported initialize) or does not
//     finish the handshake within startup_timeout: it is cut off (killed,
//     status failed, the reason in toolsError) and stays off until a
//     reload, since starting it again would only repeat that;
//   - a call unanswered within tool_timeout fails; a late answer is
//     logged and dropped.
// A server's elicitation/create (elicitation.hpp) goes to the thread whose
// tools/call is in flight, as a pending request owned by an approval actor
// of that thread (first answer wins, deadline, serverRequest/resolved);
// the answer goes back as MCP's ElicitResult. At most
// max_pending_elicitations per server; one whose thread has no call in
// flight any more is withdrawn (cancel). sampling/createMessage,
// roots/list and anything else: "method not found".
// Nothing a server sends reaches parley's stdout; its stderr goes to the log.
//
// Requests (each answered once, JSON as text):
//   (atom::call, method, params) -> result
//     method "mcpServer/tool/call": {tool, arguments?, _meta?, threadId, turnId?}
//       -> McpServerToolCallResponse; threadId (and a turn's call's turnId)
//       say whose the server's elicitations during the call are
//     method "mcpServer/resource/read": {uri} -> McpResourceReadResponse

#include <caf/actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/event_based_actor.hpp>
#include <memory>
#include <string>
#include <vector>

#include "actors/core/command_sandbox.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/model/config/mcp_servers.hpp"
#include "actors/model/http/client.hpp"

namespace parley::mcp {

struct server_options {
  model_config::mcp_server config;
  /// Gets (atom::status, name, status JSON) at each change.
  caf::actor hub;
  /// parley's version, for clientInfo.
  std::string client_version;
  /// parley's environment ("NAME=value"), from which the few inherited
  /// variables come.
  std::vector<std::string> parent_environment;
  /// How commands are confined on this host (actors/mcp/server_launch.hpp);
  /// null: the server runs unconfined.
  std::shared_ptr<const sandbox_settings> sandbox;
  /// The client a streamable-HTTP server (`url`) is reached through.
  std::shared_ptr<http::client> http;
  /// Where a server's elicitation goes to be asked (the thread's
  /// conversation spawns its approval); invalid: every one is declined.
  thread_manager_actor threads;
};

/// Spawns the server's actor (linked to the caller when `self` is given).
caf::actor spawn_server(caf::event_based_actor* self, server_options options);

}  // namespace parley::mcp
