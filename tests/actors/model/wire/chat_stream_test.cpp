#include "actors/model/wire/chat_stream.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::wire {
namespace {

using nlohmann::json;

// Two parallel tool calls as OpenAI streams them: each call's id and name
// first, then its arguments in pieces, the two interleaved by index.
const std::string parallel_calls = R"(data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1735000000,"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}

data: {"id":"chatcmpl-7","choices":[{"index":0,"delta":{"content":"Checking "},"finish_reason":null}]}

data: {"id":"chatcmpl-7","choices":[{"index":0,"delta":{"content":"both."},"finish_reason":null}]}

data: {"id":"chatcmpl-7","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"exec_command","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-7","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"cmd\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-7","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-7","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"git status\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-7","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"*** Begin Patch\\n*** End Patch\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-7","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"chatcmpl-7","choices":[],"usage":{"prompt_tokens":310,"completion_tokens":42,"total_tokens":352,"prompt_tokens_details":{"cached_tokens":256},"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

)";

std::vector<json> done_items(const std::vector<stream_event>& events) {
  std::vector<json> items;
  for (const auto& event : events) {
    if (auto* done = std::get_if<output_item_done>(&event)) items.push_back(done->item);
  }
  return items;
}

std::string text_of(const std::vector<stream_event>& events) {
  std::string text;
  for (const auto& event : events) {
    if (auto* delta = std::get_if<text_delta>(&event)) text += delta->delta;
  }
  return text;
}

TEST(chat_stream, parallel_tool_calls_are_assembled_by_index_across_chunks) {
  chat_stream stream;
  auto events = stream.feed(parallel_calls);
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(std::holds_alternative<response_created>(events.front()));
  EXPECT_EQ(std::get<response_created>(events.front()).response_id, "chatcmpl-7");
  EXPECT_EQ(text_of(events), "Checking both.");

  auto items = done_items(events);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]["type"], "message");
  EXPECT_EQ(items[0]["role"], "assistant");
  EXPECT_EQ(items[0]["content"][0], (json{{"type", "output_text"}, {"text", "Checking both."}}));
  EXPECT_EQ(items[1], (json{{"type", "function_call"},
                            {"call_id", "call_A"},
                            {"name", "exec_command"},
                            {"arguments", R"({"cmd":"git status"})"}}));
  EXPECT_EQ(items[2]["call_id"], "call_B");
  EXPECT_EQ(items[2]["name"], "apply_patch");
  EXPECT_EQ(json::parse(items[2]["arguments"].get<std::string>())["input"],
            "*** Begin Patch\n*** End Patch");

  ASSERT_TRUE(std::holds_alternative<response_completed>(events.back()));
  const auto& completed = std::get<response_completed>(events.back());
  ASSERT_TRUE(completed.usage);
  EXPECT_EQ(completed.usage->input_tokens, 310);
  EXPECT_EQ(completed.usage->cached_input_tokens, 256);
  EXPECT_EQ(completed.usage->output_tokens, 42);
  EXPECT_EQ(completed.usage->total_tokens, 352);
  EXPECT_TRUE(stream.completed());
  EXPECT_EQ(stream.finish_reason(), "tool_calls");
}

TEST(chat_stream, the_message_item_is_announced_before_its_first_delta) {
  chat_stream stream;
  auto events = stream.feed(parallel_calls);
  ASSERT_GE(events.size(), 3u);
  ASSERT_TRUE(std::holds_alternative<output_item_added>(events[1]));
  const json& item = std::get<output_item_added>(events[1]).item;
  EXPECT_EQ(item["type"], "message");
  ASSERT_TRUE(std::holds_alternative<text_delta>(events[2]));
  EXPECT_EQ(std::get<text_delta>(events[2]).item_id, item["id"]);
}

TEST(chat_stream, split_at_every_offset_gives_the_same_items) {
  chat_stream whole;
  auto expected = done_items(whole.feed(parallel_calls));
  for (std::size_t cut = 0; cut <= parallel_calls.size(); cut += 13) {
    chat_stream stream;
    auto events = stream.feed(std::string_view(parallel_calls).substr(0, cut));
    auto rest = stream.feed(std::string_view(parallel_calls).substr(cut));
    events.insert(events.end(), rest.begin(), rest.end());
    EXPECT_EQ(done_items(events), expected) << "split at " << cut;
    EXPECT_TRUE(stream.completed());
  }
}

TEST(chat_stream, reasoning_content_streams_as_raw_reasoning_and_ends_as_an_item) {
  chat_stream stream;
  auto events = stream.feed(
      "data: {\"id\":\"c2\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Think\"}}]}\n\n"
      "data: {\"id\":\"c2\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"ing.\"}}]}\n\n"
      "data: {\"id\":\"c2\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Done.\"},"
      "\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n");
  std::string reasoning;
  for (const auto& event : events) {
    if (auto* delta = std::get_if<reasoning_delta>(&event)) {
      EXPECT_FALSE(delta->summary);
      reasoning += delta->delta;
    }
  }
  EXPECT_EQ(reasoning, "Thinking.");
  auto items = done_items(events);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0]["type"], "reasoning");
  EXPECT_EQ(items[0]["content"][0]["text"], "Thinking.");
  EXPECT_EQ(items[1]["content"][0]["text"], "Done.");
  ASSERT_TRUE(std::holds_alternative<response_completed>(events.back()));
  EXPECT_FALSE(std::get<response_completed>(events.back()).usage);
}

TEST(chat_stream, a_stream_without_done_completes_at_finish_only_after_a_finish_reason) {
  chat_stream cut_short;
  cut_short.feed("data: {\"choices\":[{\"delta\":{\"content\":\"Hal\"}}]}\n\n");
  EXPECT_TRUE(cut_short.finish().empty());
  EXPECT_FALSE(cut_short.completed());

  chat_stream no_done;
  no_done.feed("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n");
  EXPECT_FALSE(no_done.completed());
  auto events = no_done.finish();
  EXPECT_TRUE(no_done.completed());
  ASSERT_EQ(done_items(events).size(), 1u);
}

TEST(chat_stream, an_error_chunk_fails_the_response) {
  chat_stream stream;
  auto events = stream.feed(
      "data: {\"error\":{\"message\":\"model overloaded\",\"code\":503}}\n\ndata: [DONE]\n\n");
  ASSERT_EQ(events.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<response_failed>(events[0]));
  EXPECT_EQ(std::get<response_failed>(events[0]).message, "model overloaded");
  EXPECT_EQ(std::get<response_failed>(events[0]).code, "503");
  EXPECT_FALSE(stream.completed());
  EXPECT_TRUE(stream.ended());
}

TEST(chat_stream, malformed_chunks_are_stream_errors) {
  for (const char* data : {"data: {not json\n\n", "data: [1]\n\n", "data: {\"choices\":{}}\n\n"}) {
    chat_stream stream;
    auto events = stream.feed(data);
    ASSERT_FALSE(events.empty()) << data;
    EXPECT_TRUE(std::holds_alternative<stream_error>(events.back())) << data;
    EXPECT_TRUE(stream.ended());
  }
}

TEST(chat_stream, a_call_without_a_name_is_a_stream_error) {
  chat_stream stream;
  auto events = stream.feed(
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n"
      "data: [DONE]\n\n");
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(std::holds_alternative<stream_error>(events.back()));
  EXPECT_FALSE(stream.completed());
}

TEST(chat_stream, calls_without_ids_get_ids_from_their_index) {
  chat_stream stream;
  auto events = stream.feed(
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"exec_command\","
      "\"arguments\":{\"cmd\":\"pwd\"}}}]}}]}\n\ndata: [DONE]\n\n");
  auto items = done_items(events);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["call_id"], "call_0");
  EXPECT_EQ(items[0]["arguments"], R"({"cmd":"pwd"})");
}

}  // namespace
}  // namespace parley::wire
