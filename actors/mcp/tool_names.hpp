#pragma once
// The names under which MCP tools are offered to a model, as Codex 0.169
// gives them: `mcp__SERVER__TOOL`, every character outside [A-Za-z0-9_-]
// made `_`, at most 64 bytes. Names that would collide (two servers or
// tools that sanitise alike) or run long get a suffix `_` + 12 hex digits
// of the SHA-1 of the raw identity, the tool part cut to make room. Pure.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parley::mcp {

constexpr size_t max_tool_name_length = 64;

/// A server's tool as the server names it.
struct raw_tool {
  std::string server;
  std::string tool;
};

/// A tool with the name the model calls it by.
struct named_tool {
  std::string server;
  std::string tool;
  std::string name;
};

/// `[A-Za-z0-9_-]` kept, anything else (each byte) `_`; "" becomes "_".
std::string sanitized_tool_name(const std::string& name);

/// Every tool once (an exact duplicate is dropped), each with a distinct
/// name, ordered by their raw identity.
std::vector<named_tool> qualify_tools(const std::vector<raw_tool>& tools);

/// A tool's listing (MCP's Tool) as a Responses function tool named `name`:
/// its description and input schema (an object schema; missing
/// `type`/`properties` filled in).
nlohmann::json function_tool(const std::string& name, const nlohmann::json& listed);

}  // namespace parley::mcp
