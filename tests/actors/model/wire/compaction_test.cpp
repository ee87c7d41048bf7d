#include "actors/model/wire/compaction.hpp"

#include <gtest/gtest.h>

#include "actors/model/wire/request_body.hpp"

namespace parley::wire {
namespace {

using nlohmann::json;

json assistant(const std::string& text) {
  return {{"type", "message"},
          {"role", "assistant"},
          {"content", json::array({{{"type", "output_text"}, {"text", text}}})}};
}

std::string text_of(const json& message) {
  return message.at("content").at(0).at("text").get<std::string>();
}

TEST(compaction, the_users_messages_then_the_summary_replace_the_history) {
  std::vector<json> history = {user_message("first"),
                               assistant("answer one"),
                               {{"type", "function_call"}, {"call_id", "c1"}, {"name", "x"}},
                               {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "o"}},
                               user_message("second")};
  auto out = compacted_history(history, "they asked twice");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(text_of(out[0]), "first");
  EXPECT_EQ(text_of(out[1]), "second");
  EXPECT_EQ(out[2].at("role"), "user");
  EXPECT_EQ(text_of(out[2]), summary_message_text("they asked twice"));
  EXPECT_TRUE(is_summary_message(text_of(out[2])));
}

TEST(compaction, an_earlier_summary_and_the_prompt_are_not_the_users) {
  std::vector<json> history = {user_message("first"), user_message(summary_message_text("old")),
                               user_message("second"), user_message(compaction_prompt())};
  auto out = compacted_history(history, "new");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(text_of(out[0]), "first");
  EXPECT_EQ(text_of(out[1]), "second");
  EXPECT_EQ(text_of(out[2]), summary_message_text("new"));
}

TEST(compaction, the_newest_user_messages_are_kept_within_the_budget) {
  std::vector<json> history = {user_message(std::string(60, 'a')), user_message(std::string(30, 'b')),
                               user_message(std::string(30, 'c'))};
  auto out = compacted_history(history, "s", 70);
  ASSERT_EQ(out.size(), 3u);  // the oldest (60 bytes) does not fit after the newer two
  EXPECT_EQ(text_of(out[0]), std::string(30, 'b'));
  EXPECT_EQ(text_of(out[1]), std::string(30, 'c'));
}

TEST(compaction, the_summary_is_the_last_thing_the_model_said) {
  std::vector<json> output = {{{"type", "reasoning"}, {"summary", json::array()}},
                              assistant("draft"), assistant("the summary")};
  EXPECT_EQ(last_assistant_text(output), "the summary");
  EXPECT_EQ(last_assistant_text({{{"type", "function_call"}, {"call_id", "c"}}}), "");
}

TEST(compaction, a_summary_request_offers_no_tools) {
  request_options o;
  o.model = "m";
  o.offer_tools = false;
  auto responses = responses_request_body({user_message(compaction_prompt())}, o);
  EXPECT_EQ(responses.at("tools"), json::array());
  auto chat = chat_request_body({user_message(compaction_prompt())}, o);
  EXPECT_FALSE(chat.contains("tools"));
  EXPECT_FALSE(chat.contains("tool_choice"));
}

}  // namespace
}  // namespace parley::wire
