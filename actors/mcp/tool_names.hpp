#pragma once
// The names under which MCP tools are offered to a model, as Codex 0.169
// gives them: each server is a Responses `namespace` tool `mcp__SERVER`
// holding its tools as functions named after them, every character outside
// [A-Za-z0-9_] made `_`. A namespace and a tool name together stay within
// 64 bytes (with the `__` that joins them). Names that would collide (two
// servers or tools that sanitise alike) or run long get a suffix `_` + 12
// hex digits of the SHA-1 of the raw identity, the tool part (or the
// namespace) cut to make room. Pure.
//
// Where namespaces cannot be offered (Chat Completions) a tool is a flat
// function `NAMESPACE__TOOL`; parley looks a call up by that flat name on
// both APIs (a Responses call's `namespace` and `name` joined so).

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

/// A tool with the names the model calls it by.
struct named_tool {
  std::string server;
  std::string tool;
  std::string ns;        ///< its namespace tool's name: `mcp__SERVER`
  std::string callable;  ///< its function's name in the namespace
  std::string name;      ///< flat_tool_name(ns, callable)
};

/// `[A-Za-z0-9_]` kept, anything else (each byte) `_`; "" becomes "_".
std::string sanitized_tool_name(const std::string& name);

/// A namespaced tool's flat name: `NAMESPACE__NAME`.
std::string flat_tool_name(const std::string& ns, const std::string& callable);

/// Every tool once (an exact duplicate is dropped), each with a distinct
/// namespace and name, ordered by their raw identity (server, then tool).
/// A tool whose flat name another one has already (names with `__` inside
/// can meet so) is dropped too: a call must find one tool.
std::vector<named_tool> qualify_tools(const std::vector<raw_tool>& tools);

/// A tool's listing (MCP's Tool) as a Responses function tool named `name`:
/// its description and its input schema as the model is offered it
/// (tool_schema.hpp).
nlohmann::json function_tool(const std::string& name, const nlohmann::json& listed);

/// A server's tools as one Responses namespace tool:
/// {"type":"namespace","name":ns,"description":...,"tools":[functions]}.
/// The description is the server's `instructions` (from its initialize
/// answer, trimmed), or "Tools in the NS namespace." when it gave none, as
/// Codex 0.169 describes it.
nlohmann::json namespace_tool(const std::string& ns, const std::string& instructions,
                              nlohmann::json functions);

}  // namespace parley::mcp
