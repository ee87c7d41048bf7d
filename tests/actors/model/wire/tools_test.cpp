#include "actors/model/wire/tools.hpp"

#include <gtest/gtest.h>

namespace parley::wire {
namespace {

using nlohmann::json;

TEST(tools, responses_flavour_has_exec_command_function_and_freeform_apply_patch) {
  json tools = responses_tools();
  ASSERT_EQ(tools.size(), 2u);
  const json& exec = tools[0];
  EXPECT_EQ(exec["type"], "function");
  EXPECT_EQ(exec["name"], "exec_command");
  EXPECT_EQ(exec["strict"], false);
  EXPECT_EQ(exec["parameters"]["required"], json::array({"cmd"}));
  for (const char* property : {"cmd", "workdir", "justification", "sandbox_permissions"}) {
    EXPECT_EQ(exec["parameters"]["properties"][property]["type"], "string") << property;
    EXPECT_FALSE(exec["parameters"]["properties"][property]["description"].get<std::string>().empty());
  }
  const json& patch = tools[1];
  EXPECT_EQ(patch["type"], "custom");
  EXPECT_EQ(patch["name"], "apply_patch");
  EXPECT_EQ(patch["format"]["type"], "grammar");
  EXPECT_EQ(patch["format"]["syntax"], "lark");
  EXPECT_EQ(patch["format"]["definition"], apply_patch_grammar());
}

TEST(tools, the_grammar_covers_every_line_of_the_patch_language) {
  const std::string& grammar = apply_patch_grammar();
  for (const char* piece : {"start:", "\"*** Begin Patch\"", "\"*** End Patch\"", "\"*** Add File: \"",
                            "\"*** Delete File: \"", "\"*** Update File: \"", "\"*** Move to: \"",
                            "\"@@\"", "\"*** End of File\"", "(\" \" | \"-\" | \"+\")", "%import common.LF"}) {
    EXPECT_NE(grammar.find(piece), std::string::npos) << piece;
  }
}

TEST(tools, function_only_flavour_makes_apply_patch_a_function_of_input) {
  json tools = responses_tools(tool_flavour::function_only);
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[1]["type"], "function");
  EXPECT_EQ(tools[1]["name"], "apply_patch");
  EXPECT_EQ(tools[1]["parameters"]["required"], json::array({"input"}));
  EXPECT_NE(tools[1]["description"].get<std::string>().find("*** Update File:"), std::string::npos);
}

TEST(tools, request_user_input_is_offered_only_when_asked_for) {
  auto extra = std::vector<json>{request_user_input_tool()};
  auto tools = responses_tools(tool_flavour::responses, extra);
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[2]["name"], "request_user_input");
  EXPECT_EQ(tools[2]["parameters"]["required"], json::array({"questions"}));
  auto chat = chat_tools(extra);
  ASSERT_EQ(chat.size(), 3u);
  EXPECT_EQ(chat[2]["function"]["name"], "request_user_input");
}

TEST(tools, request_permissions_takes_codexs_argument_names) {
  auto tool = request_permissions_tool();
  EXPECT_EQ(tool["name"], "request_permissions");
  EXPECT_EQ(tool["parameters"]["required"], json::array({"permissions"}));
  const auto& perms = tool["parameters"]["properties"]["permissions"]["properties"];
  EXPECT_TRUE(perms.contains("file_system"));
  EXPECT_TRUE(perms["file_system"]["properties"].contains("write"));
  EXPECT_EQ(perms["network"]["properties"]["enabled"]["type"], "boolean");
}

TEST(tools, chat_tools_wrap_each_function) {
  json tools = chat_tools();
  ASSERT_EQ(tools.size(), 2u);
  for (const auto& tool : tools) {
    EXPECT_EQ(tool["type"], "function");
    EXPECT_TRUE(tool["function"].contains("parameters"));
    EXPECT_FALSE(tool.contains("name"));
  }
  EXPECT_EQ(tools[0]["function"]["name"], "exec_command");
  EXPECT_EQ(tools[1]["function"]["name"], "apply_patch");
}

json mcp_namespace() {
  json echo = {{"type", "function"}, {"name", "echo"}, {"description", "Echoes"},
               {"strict", false}, {"parameters", {{"type", "object"}, {"properties", json::object()}}}};
  return {{"type", "namespace"}, {"name", "mcp__everything"}, {"description", "A server"},
          {"tools", json::array({echo})}};
}

TEST(tools, a_namespace_tool_goes_as_it_is_to_the_responses_api) {
  json tools = responses_tools(tool_flavour::responses, {mcp_namespace()});
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[2], mcp_namespace());
}

TEST(tools, servers_that_take_only_functions_get_a_namespaces_functions_flat) {
  json tools = responses_tools(tool_flavour::function_only, {mcp_namespace()});
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[2]["type"], "function");
  EXPECT_EQ(tools[2]["name"], "mcp__everything__echo");
  EXPECT_EQ(tools[2]["description"], "Echoes");
  json chat = chat_tools({mcp_namespace()});
  ASSERT_EQ(chat.size(), 3u);
  EXPECT_EQ(chat[2]["function"]["name"], "mcp__everything__echo");
  EXPECT_EQ(chat[2]["function"]["parameters"], mcp_namespace()["tools"][0]["parameters"]);
}

}  // namespace
}  // namespace parley::wire
