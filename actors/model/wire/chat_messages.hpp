#pragma once
// A history of Responses API items as Chat Completions messages:
//
//   instructions                       -> {"role":"system","content":...}
//   message (user, input_text)         -> {"role":"user","content":"<text>"}
//   message (assistant, output_text)   -> {"role":"assistant","content":"<text>"}
//   message (developer or system)      -> {"role":"system","content":"<text>"}
//   function_call, custom_tool_call,   -> {"role":"assistant","tool_calls":[...]}: one
//   local_shell_call                      message for consecutive calls, joined to
//                                         the assistant text just before them
//   *_call_output                      -> {"role":"tool","tool_call_id":...,"content":...}
//   reasoning, anything else           -> dropped
//
// A custom_tool_call (apply_patch) becomes a function call whose arguments
// are {"input": "<patch>"}, as the function-only tools declare it.

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace parley::wire {

nlohmann::json chat_messages(const std::vector<nlohmann::json>& history,
                             std::string_view instructions);

}  // namespace parley::wire
