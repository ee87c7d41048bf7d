#include "actors/model/wire/tool_calls.hpp"

#include <gtest/gtest.h>

namespace parley::wire {
namespace {

using nlohmann::json;

json function_call(const char* name, std::string arguments) {
  return {{"type", "function_call"}, {"call_id", "call_1"}, {"name", name}, {"arguments", arguments}};
}

TEST(tool_calls, request_user_input_keeps_its_arguments_for_the_turn) {
  auto call = decode_tool_call(function_call("request_user_input", R"({"questions":[{"id":"a"}]})"));
  EXPECT_EQ(call.kind, call_kind::ask_user);
  EXPECT_EQ(call.arguments["questions"][0]["id"], "a");
  EXPECT_EQ(decode_tool_call(function_call("request_user_input", "not json")).kind, call_kind::invalid);
}

TEST(tool_calls, request_permissions_keeps_its_arguments_for_the_turn) {
  auto call = decode_tool_call(
      function_call("request_permissions", R"({"permissions":{"network":{"enabled":true}}})"));
  EXPECT_EQ(call.kind, call_kind::permissions);
  EXPECT_EQ(call.arguments["permissions"]["network"]["enabled"], true);
  EXPECT_EQ(decode_tool_call(function_call("request_permissions", "{")).kind, call_kind::invalid);
}

TEST(tool_calls, exec_command_parses_its_json_string_arguments) {
  auto call = decode_tool_call(function_call(
      "exec_command",
      R"({"cmd":"grep -rn TODO src | head","workdir":"lib","justification":"needs network","sandbox_permissions":"require_escalated"})"));
  EXPECT_EQ(call.kind, call_kind::run);
  EXPECT_EQ(call.call_id, "call_1");
  EXPECT_EQ(call.command, "grep -rn TODO src | head");
  EXPECT_EQ(call.workdir, "lib");
  EXPECT_EQ(call.justification, "needs network");
  EXPECT_EQ(call.sandbox_permissions, "require_escalated");
  EXPECT_EQ(call.output, output_type::function_call_output);
}

TEST(tool_calls, a_run_call_may_name_its_timeout_and_ask_to_leave_the_sandbox) {
  auto call = decode_tool_call(function_call(
      "shell", R"({"command":["sleep","40"],"timeout_ms":10000,"sandbox_permissions":"require_escalated","justification":"why"})"));
  EXPECT_EQ(call.kind, call_kind::run);
  EXPECT_EQ(call.timeout_ms, 10000);
  EXPECT_EQ(call.sandbox_permissions, "require_escalated");
  EXPECT_EQ(call.justification, "why");
  // Not a positive integer: the configured default applies.
  for (const char* bad : {R"({"cmd":"ls","timeout_ms":-5})", R"({"cmd":"ls","timeout_ms":"9"})",
                          R"({"cmd":"ls","timeout_ms":1.5})"})
    EXPECT_EQ(decode_tool_call(function_call("exec_command", bad)).timeout_ms, 0) << bad;
}

TEST(tool_calls, shell_takes_a_command_array_and_unwraps_bash_lc) {
  auto call = decode_tool_call(function_call("shell", R"({"command":["bash","-lc","ls | wc -l"],"workdir":"/tmp"})"));
  EXPECT_EQ(call.kind, call_kind::run);
  EXPECT_EQ(call.command, "ls | wc -l");
  EXPECT_EQ(call.workdir, "/tmp");
  call = decode_tool_call(function_call("shell", R"({"command":["/bin/sh","-c","echo hi"]})"));
  EXPECT_EQ(call.command, "echo hi");
  call = decode_tool_call(function_call("shell", R"({"command":["echo","a b","it's","$HOME",""]})"));
  EXPECT_EQ(call.command, R"(echo 'a b' 'it'\''s' '$HOME' '')");
}

TEST(tool_calls, shell_command_takes_a_string) {
  auto call = decode_tool_call(function_call("shell_command", R"({"command":"make -j2","workdir":"build"})"));
  EXPECT_EQ(call.kind, call_kind::run);
  EXPECT_EQ(call.command, "make -j2");
  EXPECT_EQ(call.workdir, "build");
}

TEST(tool_calls, local_shell_call_reads_its_action) {
  json item = {{"type", "local_shell_call"},
               {"id", "lsh_1"},
               {"call_id", "call_9"},
               {"status", "completed"},
               {"action",
                {{"type", "exec"}, {"command", {"python3", "-c", "print(1)"}}, {"working_directory", "/src"}}}};
  auto call = decode_tool_call(item);
  EXPECT_EQ(call.kind, call_kind::run);
  EXPECT_EQ(call.call_id, "call_9");
  EXPECT_EQ(call.command, "python3 -c 'print(1)'");
  EXPECT_EQ(call.workdir, "/src");
  EXPECT_EQ(call.output, output_type::function_call_output);
  item.erase("call_id");
  EXPECT_EQ(decode_tool_call(item).call_id, "lsh_1");
}

TEST(tool_calls, apply_patch_as_custom_tool_or_function_or_argv) {
  const std::string patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n";
  auto custom = decode_tool_call(
      {{"type", "custom_tool_call"}, {"call_id", "c1"}, {"name", "apply_patch"}, {"input", patch}});
  EXPECT_EQ(custom.kind, call_kind::patch);
  EXPECT_EQ(custom.patch, patch);
  EXPECT_EQ(custom.output, output_type::custom_tool_call_output);

  auto function = decode_tool_call(function_call("apply_patch", json{{"input", patch}}.dump()));
  EXPECT_EQ(function.kind, call_kind::patch);
  EXPECT_EQ(function.patch, patch);
  EXPECT_EQ(function.output, output_type::function_call_output);

  auto argv = decode_tool_call(function_call("shell", json{{"command", {"apply_patch", patch}}}.dump()));
  EXPECT_EQ(argv.kind, call_kind::patch);
  EXPECT_EQ(argv.patch, patch);
}

TEST(tool_calls, broken_arguments_are_invalid_with_a_message_for_the_model) {
  auto call = decode_tool_call(function_call("exec_command", "{\"cmd\": \"ls"));
  EXPECT_EQ(call.kind, call_kind::invalid);
  EXPECT_EQ(call.call_id, "call_1");
  EXPECT_NE(call.error.find("failed to parse the arguments of exec_command"), std::string::npos);
  EXPECT_EQ(decode_tool_call(function_call("exec_command", R"({"cmd":""})")).kind, call_kind::invalid);
  EXPECT_EQ(decode_tool_call(function_call("exec_command", R"({"cmd":["ls"]})")).kind, call_kind::invalid);
  EXPECT_EQ(decode_tool_call(function_call("exec_command", "[1]")).kind, call_kind::invalid);
  EXPECT_EQ(decode_tool_call(function_call("shell", R"({"command":["ls",1]})")).kind, call_kind::invalid);
  EXPECT_EQ(decode_tool_call(function_call("apply_patch", R"({"patch":"x"})")).kind, call_kind::invalid);
  EXPECT_EQ(decode_tool_call({{"type", "function_call"}, {"name", "exec_command"}, {"arguments", "{}"}}).kind,
            call_kind::invalid);  // no call_id
  EXPECT_EQ(decode_tool_call({{"type", "message"}}).kind, call_kind::invalid);
  EXPECT_EQ(decode_tool_call(json::array()).kind, call_kind::invalid);
}

TEST(tool_calls, arguments_sent_as_an_object_are_accepted) {
  json item = {{"type", "function_call"}, {"call_id", "c"}, {"name", "exec_command"}, {"arguments", {{"cmd", "id"}}}};
  EXPECT_EQ(decode_tool_call(item).command, "id");
}

TEST(tool_calls, unknown_tools_are_named_in_the_answer) {
  auto call = decode_tool_call(function_call("web_search", "{}"));
  EXPECT_EQ(call.kind, call_kind::unknown);
  EXPECT_NE(call.error.find("web_search"), std::string::npos);
  auto custom = decode_tool_call({{"type", "custom_tool_call"}, {"call_id", "c"}, {"name", "js_repl"}, {"input", "1"}});
  EXPECT_EQ(custom.kind, call_kind::unknown);
  EXPECT_EQ(custom.output, output_type::custom_tool_call_output);
}

TEST(tool_calls, the_output_item_matches_the_calls_kind) {
  auto function = decode_tool_call(function_call("exec_command", R"({"cmd":"ls"})"));
  EXPECT_EQ(tool_output_item(function, "done"),
            (json{{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "done"}}));
  auto custom = decode_tool_call({{"type", "custom_tool_call"}, {"call_id", "c7"}, {"name", "apply_patch"}, {"input", "p"}});
  EXPECT_EQ(tool_output_item(custom, "ok"),
            (json{{"type", "custom_tool_call_output"}, {"call_id", "c7"}, {"output", "ok"}}));
}

TEST(tool_calls, is_tool_call_knows_the_three_call_types) {
  EXPECT_TRUE(is_tool_call({{"type", "function_call"}}));
  EXPECT_TRUE(is_tool_call({{"type", "custom_tool_call"}}));
  EXPECT_TRUE(is_tool_call({{"type", "local_shell_call"}}));
  EXPECT_FALSE(is_tool_call({{"type", "message"}}));
  EXPECT_FALSE(is_tool_call("function_call"));
}

TEST(tool_calls, shell_join_round_trips_through_sh) {
  EXPECT_EQ(shell_join({"ls", "-la", "src/x.cpp", "a=b", "50%"}), "ls -la src/x.cpp a=b 50%");
  EXPECT_EQ(shell_join({"printf", "%s\\n", "two words", "semi;colon"}),
            R"(printf '%s\n' 'two words' 'semi;colon')");
}

TEST(tool_calls, a_namespace_tools_function_is_found_by_its_flat_name) {
  // An MCP server's tool as Codex 0.169 offers it: a function in a namespace.
  json item = {{"type", "function_call"}, {"call_id", "c"}, {"name", "echo"},
               {"namespace", "mcp__everything"}, {"arguments", R"({"message":"hi"})"}};
  auto call = decode_tool_call(item, {"mcp__everything__echo"});
  EXPECT_EQ(call.kind, call_kind::client_tool);
  EXPECT_EQ(call.tool_name, "mcp__everything__echo");
  EXPECT_EQ(call.arguments, (json{{"message", "hi"}}));
  // The flat name called without its namespace (Chat Completions) too.
  auto flat = decode_tool_call(function_call("mcp__everything__echo", "{}"), {"mcp__everything__echo"});
  EXPECT_EQ(flat.kind, call_kind::client_tool);
  EXPECT_EQ(flat.tool_name, "mcp__everything__echo");
  // One not offered: named as Codex names it, namespace and name joined.
  item["name"] = "nosuch";
  auto unknown = decode_tool_call(item, {"mcp__everything__echo"});
  EXPECT_EQ(unknown.kind, call_kind::unknown);
  EXPECT_EQ(unknown.error.rfind("unsupported call: mcp__everythingnosuch", 0), 0u) << unknown.error;
  // A namespace does not make a built-in tool of its function.
  item["name"] = "exec_command";
  EXPECT_EQ(decode_tool_call(item).kind, call_kind::unknown);
}

}  // namespace
}  // namespace parley::wire
