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

}  // namespace
}  // namespace parley::wire
