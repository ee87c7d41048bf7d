#include "actors/model/wire/chat_messages.hpp"

#include <gtest/gtest.h>

#include "tests/actors/model/wire/history_fixture.hpp"

namespace parley::wire {
namespace {

using nlohmann::json;

json call(const char* id, const char* name, std::string arguments) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
}

TEST(chat_messages, history_with_calls_becomes_assistant_tool_calls_and_tool_messages) {
  json messages = chat_messages(testing::history_with_calls(), "Be brief.");
  json expected = json::array({
      {{"role", "system"}, {"content", "Be brief."}},
      {{"role", "user"}, {"content", "What is in this directory?"}},
      // the reasoning item is dropped; the call joins the text before it
      {{"role", "assistant"},
       {"content", "Let me look."},
       {"tool_calls", json::array({call("call_1", "exec_command", R"({"cmd":"ls"})")})}},
      {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "a.txt\nb.txt\n"}},
      // two calls in a row: one assistant message, call ids kept
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        json::array({call("call_2", "exec_command", R"({"cmd":"wc -l a.txt"})"),
                     call("call_3", "apply_patch",
                          json{{"input", "*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n"}}.dump())})}},
      {{"role", "tool"}, {"tool_call_id", "call_2"}, {"content", "3 a.txt\n"}},
      {{"role", "tool"}, {"tool_call_id", "call_3"}, {"content", "Success."}},
  });
  EXPECT_EQ(messages, expected) << messages.dump(2);
}

TEST(chat_messages, developer_messages_become_system_and_no_instructions_no_system) {
  json developer = {{"type", "message"},
                    {"role", "developer"},
                    {"content", json::array({{{"type", "input_text"}, {"text", "sandbox: read-only"}}})}};
  json messages = chat_messages({developer, user_message("a"), user_message("b")}, "");
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0], (json{{"role", "system"}, {"content", "sandbox: read-only"}}));
  EXPECT_EQ(messages[2], (json{{"role", "user"}, {"content", "b"}}));
}

TEST(chat_messages, local_shell_calls_become_shell_function_calls) {
  json item = {{"type", "local_shell_call"},
               {"call_id", "ls_1"},
               {"status", "completed"},
               {"action", {{"type", "exec"}, {"command", {"ls", "-a"}}, {"working_directory", "/w"}}}};
  json output = {{"type", "function_call_output"}, {"call_id", "ls_1"}, {"output", "."}};
  json messages = chat_messages({item, output}, "");
  ASSERT_EQ(messages.size(), 2u);
  const json& entry = messages[0]["tool_calls"][0];
  EXPECT_EQ(entry["id"], "ls_1");
  EXPECT_EQ(entry["function"]["name"], "shell");
  EXPECT_EQ(json::parse(entry["function"]["arguments"].get<std::string>()),
            (json{{"command", {"ls", "-a"}}, {"workdir", "/w"}}));
  EXPECT_EQ(messages[1]["tool_call_id"], "ls_1");
}

TEST(chat_messages, a_namespaced_call_is_named_flat_as_chat_tools_offered_it) {
  std::vector<json> history(
      {{{"type", "message"}, {"role", "user"}, {"content", json::array({{{"type", "input_text"}, {"text", "hi"}}})}},
       {{"type", "function_call"}, {"call_id", "c1"}, {"name", "echo"},
        {"namespace", "mcp__everything"}, {"arguments", "{}"}},
       {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "ok"}}});
  json messages = chat_messages(history, "");
  bool seen = false;
  for (const auto& m : messages)
    if (m.contains("tool_calls")) {
      EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "mcp__everything__echo");
      seen = true;
    }
  EXPECT_TRUE(seen) << messages.dump(2);
}

}  // namespace
}  // namespace parley::wire
