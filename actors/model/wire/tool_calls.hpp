#pragma once
// What a model's call item asks parley to do, and the item that answers it.
//
// Call items, as the Responses API (or chat_stream) hands them over:
//   function_call     {call_id, name, namespace?, arguments: "<JSON text>"}
//     exec_command    {"cmd": "ls -la", "workdir"?, "justification"?, "sandbox_permissions"?}
//     shell           {"command": ["bash", "-lc", "ls"], "workdir"?}
//     shell_command   {"command": "ls", "workdir"?}
//     apply_patch     {"input": "*** Begin Patch ..."}
//     request_user_input {"questions": [{id, header, question, options?}]}
//     request_permissions {"permissions": {file_system?, network?}, "reason"?}
//   custom_tool_call  {call_id, name: "apply_patch", input: "*** Begin Patch ..."}
//   local_shell_call  {call_id, action: {type: "exec", command: [...], working_directory?}}
//
// Commands given as an argument list become one script for /bin/sh -c:
// `bash -lc X` (and sh/zsh/dash, -c or -lc) becomes X, anything else is
// joined with POSIX quoting; ["apply_patch", P] is a patch.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parley::wire {

enum class call_kind {
  run,      ///< run `command` (in `workdir` when given)
  patch,    ///< apply `patch`
  ask_user, ///< request_user_input: ask the user `arguments` (checked by the turn)
  client_tool,  ///< a tool the thread's client declared: call it with `arguments`
  permissions,  ///< request_permissions: ask for `arguments` (checked by the turn)
  unknown,  ///< a tool parley does not offer; `error` is the answer for the model
  invalid,  ///< a tool parley offers, called wrongly; `error` is the answer
};

/// The item type that answers a call. Codex answers local_shell_call with a
/// function_call_output too, and so does parley.
enum class output_type { function_call_output, custom_tool_call_output };

struct tool_call {
  call_kind kind = call_kind::invalid;
  std::string call_id;
  std::string tool_name;  ///< as called ("local_shell" for local_shell_call)
  std::string command;    ///< run: a script for /bin/sh -c
  std::string workdir;    ///< run: as given (relative or absolute); empty: the cwd
  std::string justification;
  std::string sandbox_permissions;  ///< run: as given ("require_escalated", ...), or empty
  int64_t timeout_ms = 0;           ///< run: as given (a positive integer), or 0
  std::string patch;                ///< patch: the apply_patch text
  nlohmann::json arguments;         ///< ask_user, client_tool, permissions: parsed
  output_type output = output_type::function_call_output;
  std::string error;  ///< unknown, invalid: what to tell the model
};

/// The name a call of function `name` inside namespace tool `ns` is known
/// by: `NS__NAME`, what Chat Completions (which takes no namespace tools) is
/// offered instead (chat_tools). A Responses function_call carries
/// `namespace` beside its `name`; decode_tool_call joins them so.
std::string flat_call_name(const std::string& ns, const std::string& name);

/// Whether an output item is a call that needs an answer.
bool is_tool_call(const nlohmann::json& item);

/// The call an item asks for. Never throws; an item that is no call at all
/// comes back invalid.
/// `client_tools`: names of the thread's client-declared tools (a function
/// call of one is a client_tool call).
tool_call decode_tool_call(const nlohmann::json& item, const std::set<std::string>& client_tools = {});

/// The item answering `call` with `output`, of the type its call needs:
/// {"type":"function_call_output","call_id":...,"output":...} or the custom one.
nlohmann::json tool_output_item(const tool_call& call, std::string output);
nlohmann::json tool_output_item(output_type type, std::string call_id, std::string output);
/// The same with content items as the output (input_text, input_image).
nlohmann::json tool_content_output_item(const tool_call& call, nlohmann::json content);

/// One script from an argument list, each argument quoted for a POSIX shell
/// where it needs to be: {"echo", "a b", "it's"} -> echo 'a b' 'it'\''s'.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace parley::wire
