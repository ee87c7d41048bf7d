#include "actors/model/wire/history.hpp"

#include <gtest/gtest.h>

namespace parley::wire {
namespace {

using nlohmann::json;

json call(const char* id, const char* type = "function_call") {
  json c = {{"type", type}, {"name", "exec_command"}, {"call_id", id}};
  c[std::string(type) == "custom_tool_call" ? "input" : "arguments"] = "{}";
  return c;
}

json output(const char* id, const char* text, const char* type = "function_call_output") {
  return {{"type", type}, {"call_id", id}, {"output", text}};
}

std::vector<std::string> types(const json& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.value("type", "?"));
  return out;
}

TEST(request_history, codexs_own_fields_and_server_ids_are_not_sent) {
  // A user message as Codex 0.169 writes it in a rollout.
  json user = {{"type", "message"},
               {"id", "msg_01"},
               {"role", "user"},
               {"content", json::array({{{"type", "input_text"}, {"text", "hi"}}})},
               {"internal_chat_message_metadata_passthrough", {{"turn_id", "t"}}}};
  json said
      = {{"type", "message"},
         {"id", "msg_02"},
         {"status", "completed"},
         {"role", "assistant"},
         {"content",
          json::array({{{"type", "output_text"}, {"text", "ok"}, {"annotations", json::array()}}})},
         {"metadata", {{"history_sequence", 8}}}};
  json fc = call("c1");
  fc["id"] = "fc_1";
  fc["status"] = "completed";
  auto out = request_history({user, fc, output("c1", "done"), said});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], (json{{"type", "message"},
                          {"role", "user"},
                          {"content", json::array({{{"type", "input_text"}, {"text", "hi"}}})}}));
  EXPECT_EQ(out[1], call("c1"));
  EXPECT_EQ(out[3], (json{{"type", "message"},
                          {"role", "assistant"},
                          {"content", json::array({{{"type", "output_text"}, {"text", "ok"}}})}}));
}

TEST(request_history, a_call_without_its_output_gets_aborted_right_after_it) {
  auto out = request_history({call("c1"), call("c2", "custom_tool_call"),
                              output("c2", "patched", "custom_tool_call_output")});
  EXPECT_EQ(types(out), (std::vector<std::string>{"function_call", "function_call_output",
                                                  "custom_tool_call", "custom_tool_call_output"}));
  EXPECT_EQ(out[1], output("c1", "aborted"));
  EXPECT_EQ(out[3]["output"], "patched");
}

TEST(request_history, outputs_that_answer_nothing_sent_before_them_are_left_out) {
  auto out = request_history({output("early", "x"), call("early"), output("early", "first"),
                              output("early", "second"), output("never", "y")});
  EXPECT_EQ(types(out), (std::vector<std::string>{"function_call", "function_call_output"}));
  EXPECT_EQ(out[1]["output"], "first");
}

TEST(request_history, unknown_kinds_and_reasoning_without_encrypted_content_are_left_out) {
  json compaction = {{"type", "compaction"}, {"encrypted_content", "abc"}};
  json search = {{"type", "web_search_call"}, {"id", "ws"}, {"status", "completed"}};
  json bare = {{"type", "reasoning"}, {"id", "rs_1"}, {"summary", json::array()}};
  json kept = {{"type", "reasoning"},
               {"id", "rs_2"},
               {"summary", json::array({{{"type", "summary_text"}, {"text", "s"}}})},
               {"content", json::array({{{"type", "reasoning_text"}, {"text", "raw"}}})},
               {"encrypted_content", "gAAA"}};
  auto out = request_history(
      {compaction, search, bare, kept, json("not an object"), json{{"role", "user"}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (json{{"type", "reasoning"},
                          {"summary", json::array({{{"type", "summary_text"}, {"text", "s"}}})},
                          {"encrypted_content", "gAAA"}}));
}

TEST(request_history, a_repeated_call_is_sent_once_and_a_call_without_id_never) {
  json anonymous = call("x");
  anonymous.erase("call_id");
  auto out = request_history({call("c1"), output("c1", "one"), call("c1"), anonymous});
  EXPECT_EQ(types(out), (std::vector<std::string>{"function_call", "function_call_output"}));
}

TEST(request_history, a_local_shell_call_takes_its_id_as_call_id) {
  json shell = {{"type", "local_shell_call"},
                {"id", "ls_1"},
                {"status", "completed"},
                {"action", {{"type", "exec"}, {"command", json::array({"ls"})}}}};
  auto out = request_history({shell, output("ls_1", "a b")});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]["call_id"], "ls_1");
  EXPECT_FALSE(out[0].contains("id"));
  EXPECT_EQ(out[1]["output"], "a b");
}

TEST(request_history, a_namespaced_call_keeps_its_namespace) {
  json c = {{"type", "function_call"}, {"id", "fc_1"}, {"name", "echo"},
            {"namespace", "mcp__everything"}, {"arguments", "{}"}, {"call_id", "c1"},
            {"status", "completed"}};
  auto sent = request_history({c, output("c1", "ok")});
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0], (json{{"type", "function_call"}, {"name", "echo"},
                           {"namespace", "mcp__everything"}, {"arguments", "{}"},
                           {"call_id", "c1"}}));
}

}  // namespace
}  // namespace parley::wire
