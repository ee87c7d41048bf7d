#include "actors/model/wire/responses_stream.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::wire {
namespace {

using nlohmann::json;

// A stream as the Responses API sends it for a reasoning model that thinks,
// says a sentence and calls exec_command (trimmed of fields parley ignores,
// which the mapper must skip anyway: in_progress, content_part, *.done text).
const std::string recorded_stream = R"(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_0a1b","object":"response","created_at":1735000000,"status":"in_progress","model":"gpt-5-codex","output":[],"usage":null}}

event: response.in_progress
data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_0a1b","status":"in_progress"}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_01","type":"reasoning","summary":[]}}

event: response.reasoning_summary_part.added
data: {"type":"response.reasoning_summary_part.added","sequence_number":3,"item_id":"rs_01","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_01","output_index":0,"summary_index":0,"delta":"**Listing files**"}

event: response.reasoning_summary_text.done
data: {"type":"response.reasoning_summary_text.done","sequence_number":5,"item_id":"rs_01","output_index":0,"summary_index":0,"text":"**Listing files**"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":6,"output_index":0,"item":{"id":"rs_01","type":"reasoning","encrypted_content":"gAAAAB...","summary":[{"type":"summary_text","text":"**Listing files**"}]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":7,"output_index":1,"item":{"id":"msg_02","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":8,"item_id":"msg_02","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":9,"item_id":"msg_02","output_index":1,"content_index":0,"delta":"Let me "}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":10,"item_id":"msg_02","output_index":1,"content_index":0,"delta":"look at "}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":11,"item_id":"msg_02","output_index":1,"content_index":0,"delta":"the files."}

event: response.output_text.done
data: {"type":"response.output_text.done","sequence_number":12,"item_id":"msg_02","output_index":1,"content_index":0,"text":"Let me look at the files."}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":13,"output_index":1,"item":{"id":"msg_02","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"Let me look at the files."}],"role":"assistant"}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":14,"output_index":2,"item":{"id":"fc_03","type":"function_call","status":"in_progress","arguments":"","call_id":"call_Xy12","name":"exec_command"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":15,"item_id":"fc_03","output_index":2,"delta":"{\"cmd\":\"ls -la\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":16,"output_index":2,"item":{"id":"fc_03","type":"function_call","status":"completed","arguments":"{\"cmd\":\"ls -la\"}","call_id":"call_Xy12","name":"exec_command"}}

event: response.completed
data: {"type":"response.completed","sequence_number":17,"response":{"id":"resp_0a1b","status":"completed","usage":{"input_tokens":1520,"input_tokens_details":{"cached_tokens":1024},"output_tokens":88,"output_tokens_details":{"reasoning_tokens":64},"total_tokens":1608}}}

)";

template <class T>
const T& as(const stream_event& event) {
  EXPECT_TRUE(std::holds_alternative<T>(event)) << "event index " << event.index();
  static const T empty{};
  const T* got = std::get_if<T>(&event);
  return got ? *got : empty;
}

TEST(responses_stream, a_recorded_stream_maps_onto_typed_events) {
  responses_stream stream;
  auto events = stream.feed(recorded_stream);
  ASSERT_EQ(events.size(), 12u);
  EXPECT_EQ(as<response_created>(events[0]).response_id, "resp_0a1b");
  EXPECT_EQ(as<output_item_added>(events[1]).item["type"], "reasoning");
  const auto& summary = as<reasoning_delta>(events[2]);
  EXPECT_EQ(summary.item_id, "rs_01");
  EXPECT_EQ(summary.delta, "**Listing files**");
  EXPECT_TRUE(summary.summary);
  EXPECT_EQ(summary.index, 0);
  EXPECT_EQ(as<output_item_done>(events[3]).item["encrypted_content"], "gAAAAB...");
  EXPECT_EQ(as<output_item_added>(events[4]).item["id"], "msg_02");
  std::string text;
  for (int i = 5; i < 8; ++i) {
    EXPECT_EQ(as<text_delta>(events[static_cast<std::size_t>(i)]).item_id, "msg_02");
    text += as<text_delta>(events[static_cast<std::size_t>(i)]).delta;
  }
  EXPECT_EQ(text, "Let me look at the files.");
  EXPECT_EQ(as<output_item_done>(events[8]).item["content"][0]["text"], text);
  EXPECT_EQ(as<output_item_added>(events[9]).item["type"], "function_call");
  const json& call = as<output_item_done>(events[10]).item;
  EXPECT_EQ(call["call_id"], "call_Xy12");
  EXPECT_EQ(call["arguments"], R"({"cmd":"ls -la"})");
  const auto& completed = as<response_completed>(events[11]);
  EXPECT_EQ(completed.response_id, "resp_0a1b");
  ASSERT_TRUE(completed.usage);
  EXPECT_EQ(completed.usage->input_tokens, 1520);
  EXPECT_EQ(completed.usage->cached_input_tokens, 1024);
  EXPECT_EQ(completed.usage->output_tokens, 88);
  EXPECT_EQ(completed.usage->reasoning_output_tokens, 64);
  EXPECT_EQ(completed.usage->total_tokens, 1608);
  EXPECT_TRUE(stream.completed());
  EXPECT_TRUE(stream.ended());
}

TEST(responses_stream, split_anywhere_gives_the_same_events) {
  responses_stream whole;
  auto expected = whole.feed(recorded_stream);
  for (std::size_t cut = 1; cut < recorded_stream.size(); cut += 37) {
    responses_stream stream;
    auto events = stream.feed(std::string_view(recorded_stream).substr(0, cut));
    auto rest = stream.feed(std::string_view(recorded_stream).substr(cut));
    events.insert(events.end(), rest.begin(), rest.end());
    ASSERT_EQ(events.size(), expected.size()) << "split at " << cut;
    EXPECT_TRUE(stream.completed());
  }
}

TEST(responses_stream, raw_reasoning_deltas_carry_their_content_index) {
  auto event = map_responses_event(
      {"", R"({"type":"response.reasoning_text.delta","item_id":"rs_9","content_index":2,"delta":"hmm"})"});
  ASSERT_TRUE(event);
  const auto& delta = as<reasoning_delta>(*event);
  EXPECT_FALSE(delta.summary);
  EXPECT_EQ(delta.index, 2);
  EXPECT_EQ(delta.delta, "hmm");
}

TEST(responses_stream, a_stream_without_completed_is_not_completed) {
  responses_stream stream;
  auto cut = recorded_stream.find("event: response.completed");
  auto events = stream.feed(recorded_stream.substr(0, cut));
  EXPECT_EQ(events.size(), 11u);
  EXPECT_FALSE(stream.completed());
  EXPECT_FALSE(stream.ended());
}

TEST(responses_stream, failed_carries_the_providers_message_and_code) {
  responses_stream stream;
  auto events = stream.feed(
      "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n"
      "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"r\","
      "\"status\":\"failed\",\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit "
      "reached for gpt-5\"}}}\n\n"
      "data: {\"type\":\"response.output_text.delta\",\"delta\":\"after the end\"}\n\n");
  ASSERT_EQ(events.size(), 2u);
  const auto& failed = as<response_failed>(events[1]);
  EXPECT_EQ(failed.code, "rate_limit_exceeded");
  EXPECT_EQ(failed.message, "Rate limit reached for gpt-5");
  EXPECT_TRUE(stream.ended());
  EXPECT_FALSE(stream.completed());
  EXPECT_TRUE(stream.feed("data: {\"type\":\"response.completed\"}\n\n").empty());
}

TEST(responses_stream, incomplete_and_error_events_fail_the_response) {
  auto incomplete = map_responses_event(
      {"", R"({"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}})"});
  ASSERT_TRUE(incomplete);
  EXPECT_EQ(as<response_failed>(*incomplete).code, "incomplete");
  EXPECT_NE(as<response_failed>(*incomplete).message.find("max_output_tokens"), std::string::npos);
  auto error = map_responses_event({"error", R"({"type":"error","code":"server_error","message":"boom"})"});
  ASSERT_TRUE(error);
  EXPECT_EQ(as<response_failed>(*error).message, "boom");
}

TEST(responses_stream, malformed_json_is_a_stream_error_with_a_clear_message) {
  responses_stream stream;
  auto events = stream.feed("event: response.output_text.delta\ndata: {\"delta\": \"unterminated\n\n");
  ASSERT_EQ(events.size(), 1u);
  const auto& error = as<stream_error>(events[0]);
  EXPECT_NE(error.message.find("'response.output_text.delta' event is not JSON"), std::string::npos)
      << error.message;
  EXPECT_TRUE(stream.ended());
}

TEST(responses_stream, known_events_without_their_fields_are_errors) {
  const char* broken[] = {
      R"({"type":"response.output_text.delta","item_id":"m"})",
      R"({"type":"response.output_text.delta","delta":42})",
      R"({"type":"response.output_item.done","item":{"id":"x"}})",
      R"({"type":"response.output_item.added"})",
      R"({"type":"response.completed","response":{}})",
      R"({"type":"response.reasoning_summary_text.delta"})",
      R"([1,2,3])",
  };
  for (const char* data : broken) {
    auto event = map_responses_event({"", data});
    ASSERT_TRUE(event) << data;
    EXPECT_TRUE(std::holds_alternative<stream_error>(*event)) << data;
  }
}

TEST(responses_stream, the_event_name_stands_in_for_a_missing_type_and_others_are_ignored) {
  auto event = map_responses_event({"response.output_text.delta", R"({"delta":"x"})"});
  ASSERT_TRUE(event);
  EXPECT_EQ(as<text_delta>(*event).delta, "x");
  EXPECT_FALSE(map_responses_event({"", R"({"type":"response.content_part.added"})"}));
  EXPECT_FALSE(map_responses_event({"", R"({"type":"response.function_call_arguments.delta","delta":"{"})"}));
}

TEST(responses_stream, an_oversized_event_ends_the_stream_with_an_error) {
  responses_stream stream(128);
  auto events = stream.feed("data: {\"type\":\"response.output_text.delta\",\"delta\":\"" +
                            std::string(200, 'a') + "\"}\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<stream_error>(events[0]));
  EXPECT_TRUE(stream.ended());
}

}  // namespace
}  // namespace parley::wire
