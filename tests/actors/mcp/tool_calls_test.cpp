// What the model sees of MCP tools (issue 30): the names Codex gives them,
// their function tools, and what it is told of a call's result. Pure.

#include <gtest/gtest.h>

#include <set>

#include "actors/mcp/tool_names.hpp"
#include "protocol/mcp_tool_calls.hpp"

namespace parley::mcp {
namespace {

using json = nlohmann::json;

std::string name_of(const std::vector<named_tool>& tools, const std::string& server,
                    const std::string& tool) {
  for (const auto& t : tools)
    if (t.server == server && t.tool == tool) return t.name;
  return "<missing>";
}

TEST(McpToolNames, PlainNamesAreServerAndToolUnderMcp) {
  auto tools = qualify_tools({{"everything", "echo"}, {"everything", "get-sum"}, {"fs", "read_file"}});
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(name_of(tools, "everything", "echo"), "mcp__everything__echo");
  EXPECT_EQ(name_of(tools, "everything", "get-sum"), "mcp__everything__get-sum");
  EXPECT_EQ(name_of(tools, "fs", "read_file"), "mcp__fs__read_file");
}

TEST(McpToolNames, CharactersOutsideTheApiAlphabetBecomeUnderscores) {
  EXPECT_EQ(sanitized_tool_name("a.b c/d-e_f"), "a_b_c_d-e_f");
  EXPECT_EQ(sanitized_tool_name(""), "_");
  EXPECT_EQ(sanitized_tool_name("\xc3\xa9"), "__");  // one per byte
  auto tools = qualify_tools({{"my.server", "do it"}});
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0].name, "mcp__my_server__do_it");
  EXPECT_EQ(tools[0].server, "my.server");  // the raw names are kept for the call
  EXPECT_EQ(tools[0].tool, "do it");
}

TEST(McpToolNames, ToolsThatSanitiseAlikeGetHashSuffixes) {
  auto tools = qualify_tools({{"s", "foo.bar"}, {"s", "foo_bar"}});
  ASSERT_EQ(tools.size(), 2u);
  auto a = name_of(tools, "s", "foo.bar"), b = name_of(tools, "s", "foo_bar");
  EXPECT_NE(a, b);
  for (const auto& n : {a, b}) {
    EXPECT_EQ(n.rfind("mcp__s__foo_bar_", 0), 0u) << n;
    EXPECT_EQ(n.size(), std::string("mcp__s__foo_bar_").size() + 12) << n;
  }
  // Stable: the same tools get the same names, in any order.
  auto again = qualify_tools({{"s", "foo_bar"}, {"s", "foo.bar"}});
  EXPECT_EQ(name_of(again, "s", "foo.bar"), a);
}

TEST(McpToolNames, ServersThatSanitiseAlikeGetNamespaceSuffixes) {
  auto tools = qualify_tools({{"a.b", "t"}, {"a_b", "t"}});
  ASSERT_EQ(tools.size(), 2u);
  auto x = name_of(tools, "a.b", "t"), y = name_of(tools, "a_b", "t");
  EXPECT_NE(x, y);
  EXPECT_EQ(x.rfind("mcp__a_b_", 0), 0u);
  EXPECT_EQ(x.substr(x.size() - 3), "__t") << x;  // the suffix sits in the namespace
}

TEST(McpToolNames, LongNamesAreCutTo64WithAHash) {
  std::string tool(80, 'x');
  auto tools = qualify_tools({{"server", tool}, {"server", tool + "y"}});
  ASSERT_EQ(tools.size(), 2u);
  std::set<std::string> names;
  for (const auto& t : tools) {
    EXPECT_EQ(t.name.size(), max_tool_name_length) << t.name;
    EXPECT_EQ(t.name.rfind("mcp__server__xxx", 0), 0u);
    names.insert(t.name);
  }
  EXPECT_EQ(names.size(), 2u);
}

TEST(McpToolNames, AnExactDuplicateIsOfferedOnce) {
  EXPECT_EQ(qualify_tools({{"s", "t"}, {"s", "t"}}).size(), 1u);
}

TEST(McpFunctionTool, CarriesTheDescriptionAndAnObjectSchema) {
  json listed = {{"name", "echo"},
                 {"description", "Echoes back the input"},
                 {"inputSchema",
                  {{"type", "object"},
                   {"properties", {{"message", {{"type", "string"}}}}},
                   {"required", {"message"}}}}};
  auto f = function_tool("mcp__e__echo", listed);
  EXPECT_EQ(f["type"], "function");
  EXPECT_EQ(f["name"], "mcp__e__echo");
  EXPECT_EQ(f["description"], "Echoes back the input");
  EXPECT_EQ(f["strict"], false);
  EXPECT_EQ(f["parameters"], listed["inputSchema"]);
  auto bare = function_tool("mcp__e__ping", {{"name", "ping"}});
  EXPECT_EQ(bare["description"], "");
  EXPECT_EQ(bare["parameters"], (json{{"type", "object"}, {"properties", json::object()}}));
}

}  // namespace
}  // namespace parley::mcp

namespace parley::protocol {
namespace {

TEST(McpModelOutput, TextContentIsTheContentArrayAsJson) {
  json result = {{"content", {{{"type", "text"}, {"text", "Echo: hi"}}}}};
  auto out = mcp_output_of_result(result);
  EXPECT_TRUE(out.success);
  EXPECT_TRUE(out.content_items.is_null());
  EXPECT_EQ(json::parse(out.text), result["content"]);
}

TEST(McpModelOutput, StructuredContentWins) {
  json result = {{"content", {{{"type", "text"}, {"text", "{\"sum\":5}"}}}},
                 {"structuredContent", {{"sum", 5}}}};
  auto out = mcp_output_of_result(result);
  EXPECT_EQ(out.text, "{\"sum\":5}");
  EXPECT_TRUE(out.content_items.is_null());
  // A null structuredContent does not count.
  result["structuredContent"] = nullptr;
  EXPECT_EQ(json::parse(mcp_output_of_result(result).text), result["content"]);
}

TEST(McpModelOutput, ImagesMakeContentParts) {
  json result = {{"content",
                  {{{"type", "text"}, {"text", "a tiny image:"}},
                   {{"type", "image"}, {"data", "iVBORw0K"}, {"mimeType", "image/png"}},
                   {{"type", "image"}, {"data", "data:image/gif;base64,R0lG"}},
                   {{"type", "resource"}, {"resource", {{"uri", "x://y"}}}}}}};
  auto out = mcp_output_of_result(result);
  ASSERT_TRUE(out.content_items.is_array());
  ASSERT_EQ(out.content_items.size(), 4u);
  EXPECT_EQ(out.content_items[0], (json{{"type", "input_text"}, {"text", "a tiny image:"}}));
  EXPECT_EQ(out.content_items[1],
            (json{{"type", "input_image"}, {"image_url", "data:image/png;base64,iVBORw0K"}}));
  EXPECT_EQ(out.content_items[2]["image_url"], "data:image/gif;base64,R0lG");
  EXPECT_EQ(out.content_items[3]["type"], "input_text");
  EXPECT_EQ(json::parse(out.content_items[3]["text"].get<std::string>()), result["content"][3]);
}

TEST(McpModelOutput, IsErrorIsNoSuccessAndErrorsAreOneTextPart) {
  json result = {{"content", {{{"type", "text"}, {"text", "bad input"}}}}, {"isError", true}};
  EXPECT_FALSE(mcp_output_of_result(result).success);
  EXPECT_TRUE(mcp_result_is_error(result));
  auto out = mcp_output_of_error("MCP server `x` is not connected");
  EXPECT_FALSE(out.success);
  EXPECT_EQ(json::parse(out.text),
            (json::array({{{"type", "text"}, {"text", "MCP server `x` is not connected"}}})));
}

TEST(McpItemResult, KeepsContentStructuredContentAndMeta) {
  EXPECT_EQ(mcp_item_result(json::object()), (json{{"content", json::array()}}));
  json r = {{"content", json::array()}, {"structuredContent", {{"a", 1}}}, {"_meta", {{"m", 2}}},
            {"isError", false}, {"other", 3}};
  EXPECT_EQ(mcp_item_result(r),
            (json{{"content", json::array()}, {"structuredContent", {{"a", 1}}}, {"_meta", {{"m", 2}}}}));
}

TEST(McpProgress, MessageOrFraction) {
  EXPECT_EQ(mcp_progress_message({{"progressToken", "t"}, {"progress", 3}, {"total", 10}}), "3/10");
  EXPECT_EQ(mcp_progress_message({{"progressToken", "t"}, {"progress", 1.5}}), "1.5");
  EXPECT_EQ(mcp_progress_message({{"progress", 2}, {"message", "halfway"}}), "halfway");
  EXPECT_EQ(mcp_progress_message(json::object()), "");
}

}  // namespace
}  // namespace parley::protocol
