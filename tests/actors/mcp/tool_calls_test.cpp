// What the model sees of MCP tools (issue 30): the names Codex gives them,
// their function tools, and what it is told of a call's result. Pure.

#include <gtest/gtest.h>

#include <set>

#include "actors/mcp/tool_names.hpp"
#include "actors/mcp/tool_schema.hpp"
#include "protocol/base64.hpp"
#include "protocol/mcp_tool_calls.hpp"
#include "protocol/prompt_image.hpp"

namespace parley::mcp {
namespace {

using json = nlohmann::json;

const named_tool* find_named_tool(const std::vector<named_tool>& tools, const std::string& server,
                            const std::string& tool) {
  for (const auto& t : tools)
    if (t.server == server && t.tool == tool) return &t;
  return nullptr;
}

std::string name_of(const std::vector<named_tool>& tools, const std::string& server,
                    const std::string& tool) {
  auto t = find_named_tool(tools, server, tool);
  return t ? t->ns + "/" + t->callable : "<missing>";
}

TEST(McpToolNames, EachServerIsANamespaceMcpServerHoldingItsTools) {
  auto tools = qualify_tools({{"everything", "echo"}, {"everything", "get-sum"}, {"fs", "read_file"}});
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(name_of(tools, "everything", "echo"), "mcp__everything/echo");
  EXPECT_EQ(name_of(tools, "everything", "get-sum"), "mcp__everything/get_sum");
  EXPECT_EQ(name_of(tools, "fs", "read_file"), "mcp__fs/read_file");
  // The flat name a call is found by (and Chat Completions is offered).
  EXPECT_EQ(find_named_tool(tools, "everything", "get-sum")->name, "mcp__everything__get_sum");
  // Ordered by server, then tool.
  EXPECT_EQ(tools[0].tool, "echo");
  EXPECT_EQ(tools[2].server, "fs");
}

TEST(McpToolNames, CharactersOutsideTheApiAlphabetBecomeUnderscores) {
  EXPECT_EQ(sanitized_tool_name("a.b c/d-e_f"), "a_b_c_d_e_f");
  EXPECT_EQ(sanitized_tool_name(""), "_");
  EXPECT_EQ(sanitized_tool_name("\xc3\xa9"), "__");  // one per byte
  auto tools = qualify_tools({{"my-server", "do it"}});
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0].ns, "mcp__my_server");
  EXPECT_EQ(tools[0].callable, "do_it");
  EXPECT_EQ(tools[0].server, "my-server");  // the raw names are kept for the call
  EXPECT_EQ(tools[0].tool, "do it");
}

TEST(McpToolNames, AServerNamedMcpSomethingIsNotPrefixedTwice) {
  auto tools = qualify_tools({{"mcp__tools", "t"}});
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0].ns, "mcp__tools");
}

TEST(McpToolNames, ToolsThatSanitiseAlikeGetHashSuffixes) {
  auto tools = qualify_tools({{"s", "foo.bar"}, {"s", "foo-bar"}});
  ASSERT_EQ(tools.size(), 2u);
  auto a = find_named_tool(tools, "s", "foo.bar"), b = find_named_tool(tools, "s", "foo-bar");
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->callable, b->callable);
  for (const auto* t : {a, b}) {
    EXPECT_EQ(t->ns, "mcp__s");
    EXPECT_EQ(t->callable.rfind("foo_bar_", 0), 0u) << t->callable;
    EXPECT_EQ(t->callable.size(), std::string("foo_bar_").size() + 12) << t->callable;
  }
  // Stable: the same tools get the same names, in any order.
  auto again = qualify_tools({{"s", "foo-bar"}, {"s", "foo.bar"}});
  EXPECT_EQ(name_of(again, "s", "foo.bar"), a->ns + "/" + a->callable);
}

TEST(McpToolNames, ServersThatSanitiseAlikeGetNamespaceSuffixes) {
  auto tools = qualify_tools({{"a.b", "t"}, {"a-b", "t"}});
  ASSERT_EQ(tools.size(), 2u);
  auto x = find_named_tool(tools, "a.b", "t"), y = find_named_tool(tools, "a-b", "t");
  ASSERT_TRUE(x && y);
  EXPECT_NE(x->ns, y->ns);
  EXPECT_EQ(x->ns.rfind("mcp__a_b_", 0), 0u);
  EXPECT_EQ(x->ns.size(), std::string("mcp__a_b_").size() + 12) << x->ns;
  EXPECT_EQ(x->callable, "t");  // the suffix sits in the namespace
}

TEST(McpToolNames, LongNamesAreCutTo64WithAHash) {
  std::string tool(80, 'x');
  auto tools = qualify_tools({{"server", tool}, {"server", tool + "y"}});
  ASSERT_EQ(tools.size(), 2u);
  std::set<std::string> names;
  for (const auto& t : tools) {
    // Namespace, tool and the `__` between them: 64 bytes.
    EXPECT_EQ(t.ns.size() + t.callable.size() + 2, max_tool_name_length) << t.name;
    EXPECT_EQ(t.name.size(), max_tool_name_length);
    EXPECT_EQ(t.ns, "mcp__server");
    EXPECT_EQ(t.callable.rfind("xxx", 0), 0u);
    names.insert(t.name);
  }
  EXPECT_EQ(names.size(), 2u);
}

TEST(McpToolNames, AnExactDuplicateIsOfferedOnce) {
  EXPECT_EQ(qualify_tools({{"s", "t"}, {"s", "t"}}).size(), 1u);
}

TEST(McpToolNames, ToolsWhoseFlatNamesMeetAreOfferedOnce) {
  // mcp__a + b__c and mcp__a__b + c: distinct in their namespaces, one flat
  // name; the later is left out so that a call finds one tool.
  auto tools = qualify_tools({{"a", "b__c"}, {"a__b", "c"}});
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0].name, "mcp__a__b__c");
}

TEST(McpNamespaceTool, HoldsTheFunctionsAndTheServersInstructions) {
  auto f = function_tool("echo", {{"name", "echo"}});
  auto ns = namespace_tool("mcp__e", "  Use echo to test.\n", json::array({f}));
  EXPECT_EQ(ns, (json{{"type", "namespace"},
                      {"name", "mcp__e"},
                      {"description", "Use echo to test."},
                      {"tools", json::array({f})}}));
  EXPECT_EQ(namespace_tool("mcp__e", " \n", json::array())["description"],
            "Tools in the mcp__e namespace.");
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

TEST(McpInputSchema, KeepsCodexsKeywordsOnly) {
  // server-everything's get-resource-links, as Codex 0.169 offered it.
  json listed = json::parse(R"js({"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
    "properties":{"count":{"default":3,"description":"Number (1-10)","type":"number",
    "minimum":1,"maximum":10},"kind":{"type":"string","format":"uri","enum":["a","b"]}}})js");
  EXPECT_EQ(model_input_schema(listed), json::parse(R"js({"type":"object","properties":{
    "count":{"description":"Number (1-10)","type":"number"},
    "kind":{"type":"string","enum":["a","b"]}}})js"));
}

TEST(McpInputSchema, FillsTypesAndChildrenAndResolvesReferences) {
  json listed = json::parse(R"js({"type":"object","properties":{
    "tags":{"type":"array"},
    "paths":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":9},
    "mode":{"const":"fast"},
    "size":{"minimum":0},
    "anything":true,
    "where":{"$ref":"#/$defs/place","description":"Where to"},
    "one":{"oneOf":[{"type":"integer"}],"description":"lone variant"},
    "either":{"anyOf":[{"type":"string"},{"type":"null"}]},
    "tree":{"$ref":"#/$defs/node"}},
    "$defs":{"place":{"type":"object","properties":{"city":{"type":"string"}}},
             "node":{"type":"object","properties":{"child":{"$ref":"#/$defs/node"}}}}})js");
  auto s = model_input_schema(listed);
  const auto& p = s["properties"];
  EXPECT_FALSE(s.contains("$defs"));
  EXPECT_EQ(p["tags"], json::parse(R"js({"type":"array","items":{"type":"string"}})js"));
  EXPECT_EQ(p["paths"], json::parse(R"js({"type":"array","items":{"type":"string"},"minItems":1})js"));
  EXPECT_EQ(p["mode"], json::parse(R"js({"type":"string","enum":["fast"]})js"));
  EXPECT_EQ(p["size"], json::parse(R"js({"type":"number"})js"));
  EXPECT_EQ(p["anything"], json::parse(R"js({"type":"string"})js"));
  EXPECT_EQ(p["where"], json::parse(R"js({"type":"object","description":"Where to",
    "properties":{"city":{"type":"string"}}})js"));
  EXPECT_EQ(p["one"], json::parse(R"js({"type":"integer","description":"lone variant"})js"));
  EXPECT_EQ(p["either"], json::parse(R"js({"anyOf":[{"type":"string"},{"type":"null"}]})js"));
  // A reference back into itself stops at a plain object.
  EXPECT_EQ(p["tree"], json::parse(R"js({"type":"object","properties":{
    "child":{"type":"object","properties":{}}}})js"));
}

}  // namespace
}  // namespace parley::mcp

namespace parley::protocol {
namespace output_tests {

const std::string mcp_header = "Wall time: 0.0123 seconds\nOutput:";
const json mcp_header_part = {{"type", "input_text"}, {"text", mcp_header}};

TEST(McpModelOutput, TheWallTimeHasFourDecimals) {
  EXPECT_EQ(mcp_wall_time_header(0.01234), mcp_header);
  EXPECT_EQ(mcp_wall_time_header(2.5), "Wall time: 2.5000 seconds\nOutput:");
  EXPECT_EQ(mcp_wall_time_header(-1), "Wall time: 0.0000 seconds\nOutput:");
}

TEST(McpModelOutput, TextContentIsTextPartsAfterTheHeader) {
  json result = {{"content", {{{"type", "text"}, {"text", "Echo: hi"}}}}};
  auto out = mcp_output_of_result(result, 0.01234);
  EXPECT_TRUE(out.success);
  EXPECT_EQ(out.content_items,
            json::array({mcp_header_part, {{"type", "input_text"}, {"text", "Echo: hi"}}}));
  EXPECT_EQ(out.text, mcp_header + "\nEcho: hi");
  // No content: the header alone.
  EXPECT_EQ(mcp_output_of_result(json::object(), 0.01234).content_items, json::array({mcp_header_part}));
}

TEST(McpModelOutput, StructuredContentWinsAsTextAfterTheHeader) {
  json result = {{"content", {{{"type", "text"}, {"text", "{\"sum\":5}"}}}},
                 {"structuredContent", {{"sum", 5}}}};
  auto out = mcp_output_of_result(result, 0.01234);
  EXPECT_EQ(out.text, mcp_header + "\n{\"sum\":5}");
  EXPECT_TRUE(out.content_items.is_null());
  // A null structuredContent does not count.
  result["structuredContent"] = nullptr;
  EXPECT_EQ(mcp_output_of_result(result, 0.01234).content_items.size(), 2u);
}

// Whole 1x1 images: a PNG and a GIF.
const std::string tiny_png
    = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const std::string tiny_gif = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
// A PNG's signature and IHDR alone: its header reads, its pixels do not.
const std::string png_header_only = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ";

TEST(McpModelOutput, ImagesAreImagePartsWithADetail) {
  json result = {{"content",
                  {{{"type", "text"}, {"text", "a tiny image:"}},
                   {{"type", "image"}, {"data", tiny_png}, {"mimeType", "image/png"}},
                   {{"type", "image"}, {"data", "data:image/gif;base64," + tiny_gif},
                    {"_meta", {{"codex/imageDetail", "original"}}}},
                   {{"type", "image"}, {"data", tiny_gif}},
                   {{"type", "resource"}, {"resource", {{"uri", "x://y"}}}},
                   {{"type", "text"}, {"text", 5}}}}};
  auto out = mcp_output_of_result(result, 0.01234);
  ASSERT_TRUE(out.content_items.is_array());
  ASSERT_EQ(out.content_items.size(), 7u);
  EXPECT_EQ(out.content_items[0], mcp_header_part);
  EXPECT_EQ(out.content_items[1], (json{{"type", "input_text"}, {"text", "a tiny image:"}}));
  EXPECT_EQ(out.content_items[2], (json{{"type", "input_image"},
                                        {"image_url", "data:image/png;base64," + tiny_png},
                                        {"detail", "high"}}));
  // A GIF goes as a PNG, whatever its URL or mimeType said; "original"
  // as "high" (parley knows no model that takes original detail).
  for (size_t i : {3u, 4u}) {
    auto url = out.content_items[i]["image_url"].get<std::string>();
    ASSERT_EQ(url.rfind("data:image/png;base64,", 0), 0u) << url;
    std::string why;
    auto png = base64_decode(url.substr(22), why);
    ASSERT_TRUE(png.has_value()) << why;
    auto again = prepare_prompt_image(*png, high_detail_limits);
    EXPECT_EQ(again.result, prepared_image::outcome::ready);
    EXPECT_EQ(again.width, 1u);
    EXPECT_EQ(out.content_items[i]["detail"], "high");
  }
  // Anything else, a malformed text block too: its JSON as text.
  for (size_t i : {5u, 6u}) {
    EXPECT_EQ(out.content_items[i]["type"], "input_text");
    EXPECT_EQ(json::parse(out.content_items[i]["text"].get<std::string>()), result["content"][i - 1]);
  }
}

TEST(McpModelOutput, ImagesCodexCannotTakeAndAudioAreLeftOutSayingSo) {
  json result = {{"content",
                  {{{"type", "image"}, {"data", tiny_png}, {"mimeType", "image/png"},
                    {"_meta", {{"codex/imageDetail", "low"}}}},
                   {{"type", "image"}, {"data", png_header_only}, {"mimeType", "image/png"}},
                   {{"type", "image"}, {"data", "not base64!"}, {"mimeType", "image/png"}},
                   {{"type", "audio"}, {"data", "UklGRg=="}, {"mimeType", "audio/wav"}}}}};
  auto out = mcp_output_of_result(result, 0.01234);
  ASSERT_EQ(out.content_items.size(), 5u);
  EXPECT_EQ(out.content_items[1]["text"],
            "image content omitted because detail 'low' is not supported; use 'high', 'original', "
            "or 'auto'");
  EXPECT_EQ(out.content_items[2]["text"], "image content omitted because it could not be processed");
  EXPECT_EQ(out.content_items[3]["text"], "image content omitted because it could not be processed");
  EXPECT_EQ(out.content_items[4],
            (json{{"type", "input_text"},
                  {"text", "<audio content omitted because you do not support audio input>"}}));
  // The item shows the audio as the model was told it.
  EXPECT_EQ(mcp_item_result(result)["content"][3],
            (json{{"type", "text"},
                  {"text", "<audio content omitted because you do not support audio input>"}}));
}

TEST(McpModelOutput, JsonTextKeepsTheServersKeyOrder) {
  auto out = mcp_output_of_result_text(
      R"({"content":[{"type":"resource_link","uri":"file:///b","name":"b"}]})", 0.01234);
  EXPECT_EQ(out.content_items[1]["text"], R"({"type":"resource_link","uri":"file:///b","name":"b"})");
  auto structured = mcp_output_of_result_text(
      R"({"content":[],"structuredContent":{"temperature":33,"conditions":"Cloudy"}})", 0.01234);
  EXPECT_EQ(structured.text, mcp_header + "\n" + R"({"temperature":33,"conditions":"Cloudy"})");
}

TEST(McpModelOutput, IsErrorIsNoSuccessAndErrorsAreOneTextPart) {
  json result = {{"content", {{{"type", "text"}, {"text", "bad input"}}}}, {"isError", true}};
  EXPECT_FALSE(mcp_output_of_result(result, 0.01234).success);
  EXPECT_TRUE(mcp_result_is_error(result));
  auto out = mcp_output_of_error("MCP server `x` is not connected", 0.01234);
  EXPECT_FALSE(out.success);
  EXPECT_EQ(out.content_items,
            json::array({mcp_header_part,
                         {{"type", "input_text"}, {"text", "MCP server `x` is not connected"}}}));
}

TEST(McpItemResult, KeepsContentStructuredContentAndMetaNullWhenNotSent) {
  EXPECT_EQ(mcp_item_result(json::object()),
            (json{{"content", json::array()}, {"structuredContent", nullptr}, {"_meta", nullptr}}));
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

}  // namespace output_tests
}  // namespace parley::protocol
