#pragma once
// The tool calls of the script as both APIs name them: which tool, with which arguments.

#include <string>

#include "bench/mock_model/script.hpp"

namespace parley::mock_model {

struct tool_call {
  std::string name;
  /// The arguments as a JSON text (a function call), or the raw input (a custom tool call).
  std::string arguments;
  /// A Responses API `custom_tool_call` (freeform input) rather than a `function_call`.
  bool custom = false;
  /// The Responses API namespace the call names (Codex 0.169 offers each MCP
  /// server's tools as a namespace `mcp__SERVER`), or "" for none.
  std::string ns;
};

/// `run`, `shell`, `patch` or `tool` as a call. `custom_patch`: apply_patch as a
/// custom_tool_call (Responses API) rather than a function call with `{"input": ...}` (Chat).
tool_call tool_call_of(const action& a, bool custom_patch);

}  // namespace parley::mock_model
