#pragma once
// The server requests that hold a turn on a client without being an
// approval of an action (Codex 0.169's ServerRequest): the model's question
// to the user, a call of a tool the client declared, and the model's request
// for more sandbox permissions. Pure: what the model's arguments may be,
// the params a client is sent, and the client's answer checked against the
// schema (a decode_error says what is wrong: the answer counts as none).

#include <optional>
#include <string>

#include "protocol/json_codec.hpp"

namespace parley::protocol {

constexpr const char* user_input_request_method = "item/tool/requestUserInput";
constexpr const char* dynamic_tool_call_method = "item/tool/call";
constexpr const char* permissions_approval_method = "item/permissions/requestApproval";
constexpr const char* mcp_elicitation_method = "mcpServer/elicitation/request";

// -- item/tool/requestUserInput ------------------------------------------------

/// The model's `questions` (request_user_input's arguments: {"questions":
/// [{id, header, question, options?: [{label, description}], isOther?,
/// isSecret?}]}), checked and normalised to the schema's
/// ToolRequestUserInputQuestion list. Throws decode_error naming what is
/// wrong, for the model to read.
json checked_questions(const json& arguments);

/// ToolRequestUserInputParams: the turn blocks on the answer (isBlocking);
/// autoResolutionMs (deprecated in the schema) is not sent.
json user_input_params(const std::string& thread_id, const std::string& turn_id,
                       const std::string& item_id, const json& questions);

/// A ToolRequestUserInputResponse, checked: {"answers": {id: {"answers":
/// [string...]}}} with only ids of questions that were asked. Returns it
/// normalised; throws decode_error.
json decode_user_input_answer(const json& result, const json& questions);

// -- item/tool/call -----------------------------------------------------------------

/// One tool a client declares on thread/start (`dynamicTools`, experimental):
/// a function, or a namespace of functions.
struct dynamic_tool {
  std::string name;
  std::optional<std::string> ns;  // the namespace it belongs to
  std::string description;
  json input_schema;
};

/// thread/start's `dynamicTools` (DynamicToolSpec[]), flattened; throws
/// decode_error on a malformed spec or a name given twice.
std::vector<dynamic_tool> decode_dynamic_tools(const json& specs);

/// The name a model calls a client's tool by: `name`, or `namespace__name`
/// (function names may hold only letters, digits, `_` and `-`).
std::string model_tool_name(const dynamic_tool& t);

/// The tool as the Responses API offers a function:
/// {type: "function", name, description, parameters: inputSchema, strict: false}.
json model_function_tool(const dynamic_tool& t);

/// What a model is given as the output of a call of a client's tool: its
/// content items as the Responses API's input content (input_text,
/// input_image; audio, which a function output cannot hold, as a note).
json model_tool_output(const json& content_items);

/// DynamicToolCallParams.
json dynamic_tool_call_params(const std::string& thread_id, const std::string& turn_id,
                              const std::string& call_id, const dynamic_tool& tool,
                              const json& arguments);

/// A DynamicToolCallResponse, checked: {"contentItems": [inputText |
/// inputImage | inputAudio], "success": bool}. Throws decode_error.
json decode_dynamic_tool_answer(const json& result);

// -- item/permissions/requestApproval ---------------------------------------------

/// The model's request_permissions arguments, checked as Codex 0.169's tool
/// takes them: {"permissions": {"file_system"?: {"read"?, "write"?: [path]},
/// "network"?: {"enabled"?}}, "reason"?, "environment_id"?}, nothing else.
/// Relative paths are taken against `cwd`; every path comes back absolute
/// and normalised. Returns {"permissions": a RequestPermissionProfile (the
/// schema's shape: fileSystem {read, write, entries}, network), "reason"?};
/// throws decode_error (asking for nothing included) for the model to read.
json checked_permission_request(const json& arguments, const std::string& cwd);

/// PermissionsRequestApprovalParams.
json permissions_params(const std::string& thread_id, const std::string& turn_id,
                        const std::string& item_id, const std::string& cwd,
                        const json& permissions, const std::optional<std::string>& reason,
                        int64_t started_at_ms);

/// A PermissionsRequestApprovalResponse, checked: {"permissions":
/// GrantedPermissionProfile, "scope"?: "turn" | "session"}, normalised to
/// {"permissions": {"fileSystem"?: {"read"?, "write"?}, "network"?:
/// {"enabled": true}}, "scope": ...} (path entries folded into read and
/// write; glob and special entries, which name no path, are dropped).
/// Throws decode_error.
json decode_permissions_answer(const json& result);

/// What a decoded answer grants of what was asked (`asked`: the params'
/// RequestPermissionProfile; relative paths in the answer are taken against
/// `cwd`): a path only inside one asked for the same access (a read inside
/// an asked write too), the network only when it was asked. A client that
/// answers with more gets no more. Same shape as decode_permissions_answer.
json granted_within(const json& asked, const json& answer, const std::string& cwd);

/// Whether `granted` (a normalised answer) grants anything.
bool grants_anything(const json& granted);

/// What the model is told of a grant (Codex's output of request_permissions):
/// {"permissions": {"network": {"enabled": true} | null, "file_system":
/// {"read"?, "write"?} | null}, "scope": "turn" | "session"}. Nothing
/// granted (a decline, no answer) is the empty grant for the turn.
std::string model_grant_output(const json& granted);

// -- mcpServer/elicitation/request ------------------------------------------------

/// A McpServerElicitationRequestResponse, checked: {"action": "accept" |
/// "decline" | "cancel", "content"?, "_meta"?}. Returns MCP's ElicitResult
/// {action, content?, _meta?} (content only with accept, an object of
/// primitives; the client's `_meta` passed on, as Codex). Throws decode_error.
json decode_elicitation_answer(const json& result);

}  // namespace parley::protocol
