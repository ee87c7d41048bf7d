#pragma once
// The tools parley offers a model, in the shapes the APIs take:
//
//   exec_command  a function tool: {cmd, workdir?, justification?,
//                 sandbox_permissions?}; runs `cmd` with /bin/sh -c
//   apply_patch   a freeform ("custom") tool whose input is the patch text,
//                 constrained by a Lark grammar of the apply_patch language
//
// Servers that take only function tools (Chat Completions, many local
// servers) get apply_patch as a function with one string `input`.
// Decoding what the model calls is tool_calls.hpp.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace parley::wire {

inline constexpr std::string_view exec_command_tool = "exec_command";
inline constexpr std::string_view apply_patch_tool = "apply_patch";
inline constexpr std::string_view request_user_input_tool_name = "request_user_input";
inline constexpr std::string_view request_permissions_tool_name = "request_permissions";

enum class tool_flavour {
  /// exec_command a function, apply_patch a freeform tool with a grammar.
  responses,
  /// Every tool a function; apply_patch takes {"input": "<patch>"}.
  function_only,
};

/// The Responses API's "tools" array, with `extra` tools after parley's
/// own. A namespace tool among them (an MCP server's) goes as it is, or as
/// its functions named flat_call_name(namespace, name) for function_only.
nlohmann::json responses_tools(tool_flavour flavour = tool_flavour::responses,
                               const std::vector<nlohmann::json>& extra = {});

/// responses_tools(flavour, extra) as JSON text, the same bytes as its dump
/// (invalid UTF-8 replaced). parley's own tools never change, so their text
/// is made once a process; only `extra` is written each time.
std::string responses_tools_text(tool_flavour flavour, const std::vector<nlohmann::json>& extra);

/// The Chat Completions "tools" array ({"type":"function","function":{...}}),
/// namespace tools' functions flat as for function_only.
nlohmann::json chat_tools(const std::vector<nlohmann::json>& extra = {});

/// request_user_input: a function tool {questions: [{id, header, question,
/// options?: [{label, description}]}]} whose call asks the user
/// (item/tool/requestUserInput) and whose output is the answers as JSON.
nlohmann::json request_user_input_tool();

/// request_permissions: a function tool {permissions: {file_system?: {read?,
/// write?: [path]}, network?: {enabled}}, reason?} whose call asks a client
/// for more sandbox permissions (item/permissions/requestApproval) and whose
/// output is what was granted as JSON.
nlohmann::json request_permissions_tool();

/// The Lark grammar of the apply_patch language given to the freeform tool.
const std::string& apply_patch_grammar();

}  // namespace parley::wire
