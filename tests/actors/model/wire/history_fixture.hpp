#pragma once
// A conversation's history as the streams hand its items over: a user asks,
// the model reasons, says something and calls exec_command, the output
// follows; then two calls in a row (exec_command and apply_patch) and their
// outputs.

#include <vector>

#include <nlohmann/json.hpp>

#include "actors/model/wire/request_body.hpp"

namespace parley::wire::testing {

inline std::vector<nlohmann::json> history_with_calls() {
  using nlohmann::json;
  return {
      user_message("What is in this directory?"),
      {{"type", "reasoning"},
       {"id", "rs_1"},
       {"summary", json::array({{{"type", "summary_text"}, {"text", "**Listing**"}}})},
       {"encrypted_content", "gAAA"}},
      {{"type", "message"},
       {"id", "msg_1"},
       {"status", "completed"},
       {"role", "assistant"},
       {"content", json::array({{{"type", "output_text"}, {"text", "Let me look."}}})}},
      {{"type", "function_call"},
       {"id", "fc_1"},
       {"status", "completed"},
       {"call_id", "call_1"},
       {"name", "exec_command"},
       {"arguments", R"({"cmd":"ls"})"}},
      {{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "a.txt\nb.txt\n"}},
      {{"type", "function_call"},
       {"id", "fc_2"},
       {"call_id", "call_2"},
       {"name", "exec_command"},
       {"arguments", R"({"cmd":"wc -l a.txt"})"}},
      {{"type", "custom_tool_call"},
       {"id", "ctc_3"},
       {"status", "completed"},
       {"call_id", "call_3"},
       {"name", "apply_patch"},
       {"input", "*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n"}},
      {{"type", "function_call_output"}, {"call_id", "call_2"}, {"output", "3 a.txt\n"}},
      {{"type", "custom_tool_call_output"}, {"call_id", "call_3"}, {"output", "Success."}},
  };
}

}  // namespace parley::wire::testing
