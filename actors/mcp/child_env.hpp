#pragma once
// The environment of a stdio MCP server: a few variables inherited from
// parley's own (what a program needs to find its tools and its home, as
// Codex passes them), the names the config passes through (`env_vars`),
// then the config's `env` on top. Never parley's whole environment: a
// server sees no key it was not given. Pure.

#include <string>
#include <vector>

#include "actors/model/config/mcp_servers.hpp"

namespace parley::mcp {

/// The variables every server inherits when parley has them.
const std::vector<std::string>& inherited_variables();

/// "NAME=value" lines for the server; `parent` is parley's environment
/// ("NAME=value" each).
std::vector<std::string> child_environment(const model_config::mcp_server& server,
                                           const std::vector<std::string>& parent);

}  // namespace parley::mcp
