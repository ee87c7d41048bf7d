#pragma once
// The `[mcp_servers.NAME]` tables of Codex's config.toml: how to start each
// MCP server and what of it to use. Pure, like the rest of the config
// library; actors/mcp runs what is described here.
//
//   [mcp_servers.everything]
//   command = "npx"                      # a stdio server: a command ...
//   args = ["-y", "@modelcontextprotocol/server-everything"]
//   env = { LOG = "1" }                  # set for it, on top of a few inherited ones
//   env_vars = ["GITHUB_TOKEN"]          # passed through from parley's environment
//   cwd = "/srv"                         # where it runs (parley's cwd when not set)
//   startup_timeout_sec = 10             # handshake and tool listing (default 10)
//   tool_timeout_sec = 60                # each tools/call (default 60)
//   enabled = true
//   enabled_tools = ["echo"]             # only these (when given) ...
//   disabled_tools = ["longRunning"]     # ... minus these
//   sandbox_mode = "workspace-write"     # parley's: how the server is confined (below)
//   sandbox_writable_roots = ["/srv/data"]
//   sandbox_network = true
//
//   [mcp_servers.everything.tools.echo]
//   approval_mode = "prompt"             # "auto" (default), "prompt" or "approve"
//
//   [mcp_servers.remote]
//   url = "https://example.com/mcp"      # streamable HTTP
//   bearer_token_env_var = "REMOTE_TOKEN"           # Authorization: Bearer $REMOTE_TOKEN
//   http_headers = { "X-Team" = "infra" }           # sent as given
//   env_http_headers = { "X-Key" = "REMOTE_KEY" }   # header = the variable's value
//
// A stdio server is a command like any other: parley runs it through
// parley-sandbox (the sandbox issue), hiding parley's home and secrets and
// applying the per-command memory and process limits (not the CPU time: a
// server lives as long as parley). Codex runs its servers unconfined; parley
// confines them unless the table says `sandbox_mode = "danger-full-access"`.
// The default, workspace-write with the network on, lets a server write its
// cwd, /tmp and `sandbox_writable_roots` and reach the services it fronts.
//
// Keys parley does not use (scopes, oauth_resource, ...)
// are ignored, as everywhere in the file.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parley::model_config {

struct mcp_server {
  /// The key under [mcp_servers].
  std::string name;
  /// stdio: the program (searched in PATH) and its arguments.
  std::string command;
  std::vector<std::string> args;
  /// Variables set for the server, and names passed through from parley's
  /// own environment.
  std::map<std::string, std::string> env;
  std::vector<std::string> env_vars;
  /// Empty: parley's working directory.
  std::string cwd;
  /// Streamable HTTP. Empty for stdio.
  std::string url;
  /// Streamable HTTP: the variable whose value is sent as a bearer token,
  /// headers sent as given, and headers whose values come from variables
  /// (header name -> variable name). A variable that is not set sends
  /// nothing (and the log says so).
  std::string bearer_token_env_var;
  std::map<std::string, std::string> http_headers;
  std::map<std::string, std::string> env_http_headers;
  bool enabled = true;
  std::chrono::milliseconds startup_timeout{10'000};
  std::chrono::milliseconds tool_timeout{60'000};
  /// Not set: every tool the server lists.
  std::optional<std::vector<std::string>> enabled_tools;
  std::vector<std::string> disabled_tools;
  /// `[mcp_servers.NAME.tools.TOOL] approval_mode`, by tool: whether a
  /// model's call of it asks a person first ("auto": as its annotations
  /// say; "prompt": always; "approve": never). Tools not named are "auto".
  std::map<std::string, std::string> tool_approval_modes;

  /// How the server is confined (a stdio server only).
  enum class sandbox { read_only, workspace_write, danger_full_access };
  sandbox sandbox_mode = sandbox::workspace_write;
  /// Writable beside its cwd and /tmp (workspace-write); absolute paths.
  std::vector<std::string> sandbox_writable_roots;
  bool sandbox_network = true;

  bool is_stdio() const { return url.empty(); }
  /// Whether a tool the server lists is used (enabled_tools, then
  /// disabled_tools).
  bool tool_enabled(const std::string& tool) const;
  /// The tool's approval_mode ("auto" when not configured).
  std::string approval_mode(const std::string& tool) const;
};

/// Field by field: a reload restarts a server whose table changed. The
/// tools' approval modes are not compared: a reload takes them without a
/// restart (they matter to the calls, not to the server).
bool operator==(const mcp_server& a, const mcp_server& b);
inline bool operator!=(const mcp_server& a, const mcp_server& b) { return !(a == b); }

/// The servers by name.
using mcp_servers = std::map<std::string, mcp_server>;

}  // namespace parley::model_config
