#include "actors/model/wire/request_body.hpp"

#include <gtest/gtest.h>

#include "tests/actors/model/wire/history_fixture.hpp"

namespace parley::wire {
namespace {

using nlohmann::json;

request_options options() {
  request_options o;
  o.model = "gpt-5-codex";
  o.instructions = "You are a coding agent.";
  return o;
}

TEST(request_body, user_message_is_an_input_text_message_item) {
  EXPECT_EQ(user_message("hi"),
            (json{{"type", "message"},
                  {"role", "user"},
                  {"content", json::array({{{"type", "input_text"}, {"text", "hi"}}})}}));
}

TEST(request_body, responses_body_carries_history_tools_and_codexs_settings) {
  auto history = testing::history_with_calls();
  json body = responses_request_body(history, options());
  EXPECT_EQ(body["model"], "gpt-5-codex");
  EXPECT_EQ(body["instructions"], "You are a coding agent.");
  EXPECT_EQ(body["tool_choice"], "auto");
  EXPECT_EQ(body["parallel_tool_calls"], true);  // several calls in one answer run in turn
  EXPECT_EQ(body["store"], false);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["include"], json::array());
  EXPECT_FALSE(body.contains("reasoning"));
  EXPECT_FALSE(body.contains("prompt_cache_key"));
  EXPECT_EQ(body["tools"], responses_tools());

  const json& input = body["input"];
  ASSERT_EQ(input.size(), history.size());
  for (std::size_t i = 0; i < input.size(); ++i) {
    EXPECT_FALSE(input[i].contains("id")) << i;  // nothing is stored server-side
    EXPECT_EQ(input[i]["type"], history[i]["type"]) << i;
  }
  EXPECT_EQ(input[3], (json{{"type", "function_call"}, {"call_id", "call_1"}, {"name", "exec_command"},
                            {"arguments", R"({"cmd":"ls"})"}}));
  EXPECT_EQ(input[4], history[4]);
  EXPECT_EQ(input[4]["call_id"], input[3]["call_id"]);
  EXPECT_EQ(input[6]["status"], "completed");  // custom tool calls keep theirs
  EXPECT_EQ(input[1]["encrypted_content"], "gAAA");
}

TEST(request_body, reasoning_asks_for_encrypted_reasoning_back) {
  auto o = options();
  o.reasoning = json{{"effort", "high"}, {"summary", "auto"}};
  o.prompt_cache_key = "thread-42";
  o.tools = tool_flavour::function_only;
  json body = responses_request_body({user_message("x")}, o);
  EXPECT_EQ(body["reasoning"], (json{{"effort", "high"}, {"summary", "auto"}}));
  EXPECT_EQ(body["include"], json::array({"reasoning.encrypted_content"}));
  EXPECT_EQ(body["prompt_cache_key"], "thread-42");
  EXPECT_EQ(body["tools"][1]["type"], "function");
}

TEST(request_body, raw_reasoning_text_is_not_sent_back) {
  json reasoning = {{"type", "reasoning"},
                    {"id", "rs_chat"},
                    {"summary", json::array()},
                    {"encrypted_content", "gAAA"},
                    {"content", json::array({{{"type", "reasoning_text"}, {"text", "thinking"}}})}};
  json body = responses_request_body({reasoning}, options());
  EXPECT_EQ(body["input"][0], (json{{"type", "reasoning"},
                                    {"summary", json::array()},
                                    {"encrypted_content", "gAAA"}}));
}

TEST(request_body, reasoning_without_encrypted_content_is_left_out) {
  // store is false: without its encrypted content the item names nothing
  // the server kept, and the request would be refused.
  json reasoning = {{"type", "reasoning"}, {"id", "rs_1"}, {"summary", json::array()}};
  json body = responses_request_body({reasoning, user_message("hi")}, options());
  ASSERT_EQ(body["input"].size(), 1u);
  EXPECT_EQ(body["input"][0]["role"], "user");
}

TEST(request_body, chat_body_converts_the_history_and_asks_for_usage) {
  auto o = options();
  o.reasoning = json{{"effort", "low"}};
  json body = chat_request_body(testing::history_with_calls(), o);
  EXPECT_EQ(body["model"], "gpt-5-codex");
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"], (json{{"include_usage", true}}));
  EXPECT_EQ(body["tools"], chat_tools());
  EXPECT_EQ(body["reasoning_effort"], "low");
  EXPECT_EQ(body["messages"][0], (json{{"role", "system"}, {"content", "You are a coding agent."}}));
  EXPECT_FALSE(chat_request_body({}, options()).contains("reasoning_effort"));
}

TEST(request_body, body_text_replaces_invalid_utf8_instead_of_throwing) {
  json call = {{"type", "function_call"}, {"name", "exec_command"}, {"call_id", "c"}, {"arguments", "{}"}};
  json item = {{"type", "function_call_output"}, {"call_id", "c"}, {"output", std::string("bad \xff byte")}};
  std::string text;
  ASSERT_NO_THROW(text = body_text(responses_request_body({call, item}, options())));
  EXPECT_NE(text.find("bad \xEF\xBF\xBD byte"), std::string::npos);
  EXPECT_TRUE(json::accept(text));
}

TEST(request_body, responses_text_is_the_bodys_dump_byte_for_byte) {
  // Every option's presence and absence, each string field holding what
  // needs escaping or is not UTF-8, parley's tools and extra ones (a
  // namespace tool, flattened for function_only), against nlohmann's dump.
  const std::vector<std::string> strings = {
      "", "plain", "quote \" backslash \\ slash /", "\b\f\n\r\t \x01\x1f\x7f",
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "bad \xff byte", "cut \xE2\x82",
      "overlong \xC0\xAF", "surrogate \xED\xA0\x80", std::string("nul \0 inside", 12)};
  json namespace_tool = {{"type", "namespace"},
                         {"name", "mcp__everything"},
                         {"tools", json::array({{{"type", "function"}, {"name", "echo"}}})}};
  json odd_tool = {{"type", "function"}, {"name", "bad \xff"}, {"description", "\u2028 \n"}};
  std::size_t compared = 0;
  for (const auto& text : strings) {
    auto history = testing::history_with_calls();
    history.push_back(user_message(text));
    history.push_back({{"type", "function_call_output"}, {"call_id", text}, {"output", text}});
    for (int shape = 0; shape < 32; ++shape) {
      request_options o;
      o.model = text;
      o.instructions = "You are " + text;
      o.developer_instructions = (shape & 1) ? text + "!" : "";
      if (shape & 2) o.reasoning = json{{"effort", text}, {"summary", "auto"}};
      if (shape & 4) o.prompt_cache_key = text;
      o.tools = (shape & 8) ? tool_flavour::function_only : tool_flavour::responses;
      o.offer_tools = (shape & 16) == 0;
      if (shape % 3 == 0) o.extra_tools = {request_user_input_tool(), namespace_tool, odd_tool};
      for (const auto& items : {history, std::vector<json>{}}) {
        std::string expected;
        ASSERT_NO_THROW(expected = body_text(responses_request_body(items, o)));
        ASSERT_EQ(responses_request_text(items, o), expected) << "shape " << shape << ": " << text;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, strings.size() * 64);
}

TEST(request_body, responses_tools_text_is_the_tools_dump) {
  json namespace_tool = {{"type", "namespace"},
                         {"name", "srv"},
                         {"tools", json::array({{{"name", "a"}}, {{"name", "b"}}})}};
  for (auto flavour : {tool_flavour::responses, tool_flavour::function_only}) {
    EXPECT_EQ(responses_tools_text(flavour, {}), responses_tools(flavour).dump());
    std::vector<json> extra = {request_permissions_tool(), namespace_tool};
    EXPECT_EQ(responses_tools_text(flavour, extra), responses_tools(flavour, extra).dump());
  }
  // Flattened for function_only: the namespace's two functions, not the namespace.
  EXPECT_EQ(json::parse(responses_tools_text(tool_flavour::function_only, {namespace_tool})).size(), 4u);
}

}  // namespace
}  // namespace parley::wire
