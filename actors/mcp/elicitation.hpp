#pragma once
// An MCP server's elicitation/create, judged before anybody is asked: which
// thread it is for, whether parley can show it, what a client is sent and
// what the server gets back. Pure (no CAF, no logging), unit-tested in
// tests/actors/mcp/.
//
// Servers are process-wide in parley, so a server's question carries no
// thread: it is for the thread whose tools/call is in flight on that server
// (every call names its thread). With calls of two threads in flight, or
// none, parley cannot tell who asked, and declines: one user's question is
// never shown to another thread's clients.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace parley::mcp {

using json = nlohmann::json;

/// Elicitations of one server that may be pending at once (asked of a
/// thread's clients and not yet answered); more are declined at once.
constexpr size_t max_pending_elicitations = 8;

/// Whose a tools/call in flight is: its thread, and its turn ("" for a
/// client's own mcpServer/tool/call).
struct call_owner {
  std::string thread_id;
  std::string turn_id;
};

/// The thread (and turn) an elicitation is for, or why there is none.
struct elicitation_route {
  std::optional<call_owner> owner;
  std::string why_not;
};

/// The one thread with calls in flight; its turn when all its calls share
/// one (else none: turnId null).
elicitation_route route_elicitation(const std::vector<call_owner>& in_flight);

/// What is wrong with elicitation/create's params for parley, or "" when
/// nothing is. parley declares both modes as Codex 0.169 does
/// (`elicitation: {form: {}, url: {}}`). Form mode (the default when no
/// `mode` is given): a message, and a requestedSchema as Codex 0.169's
/// McpElicitationSchema has it (type "object"; properties each a string,
/// number, integer, boolean or enum field, an array for a multi-select;
/// `required` a list of strings; no key beyond those), so that what a
/// client is sent is what Codex would send. URL mode: a message, a
/// non-empty url and an elicitationId, all strings. Any other mode is
/// refused.
std::string elicitation_problem(const json& params);

/// Whether a checked request is URL mode (else form mode).
bool is_url_mode(const json& params);

/// McpServerElicitationRequestParams for a checked request: form mode
/// (message, requestedSchema) or URL mode (message, url, elicitationId,
/// `_meta` null when the server sent none, as Codex sends it).
json elicitation_request_params(const std::string& server, const call_owner& owner,
                                const json& params);

/// MCP's ElicitResult without content: action "decline" or "cancel".
json elicit_result(const std::string& action);

/// What the server is sent of a client's answer (McpServerElicitationRequest-
/// Response, decoded): as given in form mode; in URL mode without `content`,
/// which MCP reserves for form mode (the user answers out of band).
json elicit_result_of_answer(const json& answer, bool url_mode);

}  // namespace parley::mcp
