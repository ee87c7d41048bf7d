#pragma once
// Whether a model's call of an MCP tool needs a person's approval, and how
// it is asked, as Codex 0.169 decides and asks (issue 30). Pure: shared by
// the turn (actors/threads), the hub's offer (actors/mcp) and the tests.
//
// The decision takes the tool's annotations (tools/list), its
// `[mcp_servers.S.tools.T] approval_mode` and the turn's policies:
//   - approval `never` with a danger-full-access (or external) sandbox: runs;
//   - mode `approve`: runs; mode `prompt`: needs approval, even read-only;
//   - mode `auto` (the default): the annotations say whether it may change
//     the world: readOnlyHint true runs unless destructiveHint is true;
//     otherwise a missing destructiveHint or openWorldHint counts as true,
//     so a tool with no annotations at all needs approval (fails closed,
//     as Codex 0.169 asks);
//   - a call that needs approval is asked under every policy but `never`
//     (granular included, whatever its mcp_elicitations); under `never` it
//     is refused unasked, and the model is told Codex's sentence.
// The question is an mcpServer/elicitation/request (form mode, no fields)
// whose `_meta` says `codex_approval_kind = "mcp_tool_call"`, with the
// tool's params; an explicit accept runs the call, anything else does not.

#include <optional>
#include <string>

#include "protocol/json_codec.hpp"
#include "protocol/types.hpp"

namespace parley::protocol {

/// `[mcp_servers.S.tools.T] approval_mode` (Codex's AppToolApproval).
enum class mcp_approval_mode { automatic, prompt, approve };
const char* to_string(mcp_approval_mode x);
/// "auto", "prompt" or "approve"; nullopt for anything else.
std::optional<mcp_approval_mode> mcp_approval_mode_of(const std::string& text);

/// What becomes of a model's call before it reaches the server.
enum class mcp_call_gate {
  run,     ///< called unasked
  ask,     ///< called only if a person accepts
  refuse,  ///< needs approval, but the policy is `never`: not called
};
const char* to_string(mcp_call_gate x);

/// The gate of a call (a tool already accepted for the session runs
/// instead of asked or refused: the turn knows its grants). `annotations`:
/// the tool's ToolAnnotations as listed (null or absent: none).
mcp_call_gate mcp_call_gate_of(const json& annotations, mcp_approval_mode mode,
                               const approval_policy& policy, const sandbox_policy& sandbox);

/// Whether an MCP server's own elicitations are declined without asking
/// anyone: approval `never`, or granular with mcp_elicitations false (as
/// Codex). An MCP tool call's approval is not one of them: it is asked
/// under every policy but `never` (mcp_call_gate_of).
bool elicitations_rejected(const approval_policy& policy);

/// Whether "accept for the session" and "always" are offered (and
/// honoured): only for a tool in mode `auto`, as Codex keys its remembered
/// approvals (`_meta.persist = ["session", "always"]`).
bool mcp_session_approval_offered(mcp_approval_mode mode);

/// What the approval asks about.
struct mcp_approval_subject {
  std::string thread_id;
  std::string turn_id;
  std::string call_id;
  std::string server;
  std::string tool;
  json arguments;         // the call's arguments (object or null)
  std::string title;      // the tool's title, if it has one
  std::string description;  // the tool's description, if it has one
  json annotations;       // the tool's annotations as listed (null: none)
  mcp_approval_mode mode = mcp_approval_mode::automatic;
};

/// The question's text: `Allow the S MCP server to run tool "T"?`.
std::string mcp_approval_message(const std::string& server, const std::string& tool);

/// McpServerElicitationRequestParams of the approval (threadId, turnId,
/// serverName, mode "form", message, an empty requestedSchema, and `_meta`
/// as Codex 0.169 sends it: codex_approval_kind, persist (["session",
/// "always"] when offered), tool_name, tool_annotations, tool_title,
/// tool_description, tool_params, tool_params_display).
json mcp_approval_request_params(const mcp_approval_subject& s);

/// How a person answered (McpServerElicitationRequestResponse).
enum class mcp_approval_answer { accept, accept_for_session, accept_always, decline, cancel };
const char* to_string(mcp_approval_answer x);
/// Reads the answer as Codex does: `accept` runs (with `_meta.persist =
/// "session"`, for the session; with "always", for good: config.toml says
/// `approval_mode = "approve"`; an answer naming the question
/// `mcp_tool_call_approval_<callId>` may pick "Allow for this session" or
/// "Allow and don't ask me again"), `decline` and `cancel` do not; anything
/// malformed cancels. A mode other than `auto` never remembers.
mcp_approval_answer decode_mcp_approval_answer(const json& answer, const std::string& call_id,
                                               mcp_approval_mode mode);

/// What the model and the item are told of a call that did not run.
constexpr const char* mcp_rejected_text = "user rejected MCP tool call";
constexpr const char* mcp_cancelled_text = "user cancelled MCP tool call";
/// ... and of a call that needed approval under the policy `never`.
constexpr const char* mcp_refused_by_policy_text
    = "MCP tool call requires approval, but approval policy is never";

}  // namespace parley::protocol
