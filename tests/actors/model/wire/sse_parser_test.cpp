#include "actors/model/wire/sse_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::wire {
namespace {

std::vector<sse_event> parse_whole(std::string_view bytes) {
  sse_parser parser;
  return parser.feed(bytes);
}

const std::string responses_framing =
    "event: response.created\n"
    "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n"
    "\n"
    ": keep-alive\n"
    "event: response.output_text.delta\n"
    "id: 7\n"
    "retry: 3000\n"
    "data: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n"
    "\n";

TEST(sse_parser, event_and_data_framing) {
  auto events = parse_whole(responses_framing);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "response.created");
  EXPECT_EQ(events[0].data, R"({"type":"response.created","response":{"id":"resp_1"}})");
  EXPECT_EQ(events[1].event, "response.output_text.delta");
  EXPECT_EQ(events[1].data, R"({"type":"response.output_text.delta","delta":"Hi"})");
}

TEST(sse_parser, bare_data_framing) {
  auto events = parse_whole("data: {\"a\":1}\n\ndata: [DONE]\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], (sse_event{"", "{\"a\":1}"}));
  EXPECT_EQ(events[1], (sse_event{"", "[DONE]"}));
}

TEST(sse_parser, every_line_end_and_the_space_after_the_colon) {
  auto events = parse_whole("event:a\r\ndata:x\r\ndata:  y\r\n\r\nevent: b\rdata: z\r\r");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], (sse_event{"a", "x\n y"}));  // only one space is taken off
  EXPECT_EQ(events[1], (sse_event{"b", "z"}));
}

TEST(sse_parser, multi_line_data_is_joined_with_newlines) {
  auto events = parse_whole("data: one\ndata:\ndata: three\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "one\n\nthree");
}

TEST(sse_parser, an_event_without_data_is_not_dispatched_and_names_do_not_leak) {
  auto events = parse_whole("event: ping\n\n: only a comment\n\ndata: after\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], (sse_event{"", "after"}));
}

TEST(sse_parser, an_unfinished_event_waits_for_its_blank_line) {
  sse_parser parser;
  EXPECT_TRUE(parser.feed("data: partial\n").empty());
  auto events = parser.feed("\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "partial");
}

TEST(sse_parser, splitting_at_every_byte_offset_gives_the_same_events) {
  const std::string stream = responses_framing + "event: x\r\ndata: a\r\ndata: b\r\n\r\n" +
                             "data: c\rdata: d\r\r" + "data: {\"k\":\"v\"}\n\n";
  auto expected = parse_whole(stream);
  ASSERT_EQ(expected.size(), 5u);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    sse_parser parser;
    auto events = parser.feed(std::string_view(stream).substr(0, cut));
    auto rest = parser.feed(std::string_view(stream).substr(cut));
    events.insert(events.end(), rest.begin(), rest.end());
    EXPECT_EQ(events, expected) << "split at byte " << cut;
  }
}

TEST(sse_parser, one_byte_at_a_time_gives_the_same_events) {
  const std::string stream = "event: e\r\ndata: 1\r\n\r\ndata: 2\r\rdata: 3\n\n";
  sse_parser parser;
  std::vector<sse_event> events;
  for (char c : stream) {
    auto got = parser.feed(std::string_view(&c, 1));
    events.insert(events.end(), got.begin(), got.end());
  }
  EXPECT_EQ(events, parse_whole(stream));
  EXPECT_EQ(events.size(), 3u);
}

// The form the Responses stream reads with: each event handed over in the
// parser's own buffers, which the next event reuses. What it hands over,
// copied at each call, is what the vector form returns, split anywhere; a
// short event after a long one is not left with the long one's bytes.
TEST(sse_parser, events_handed_over_in_place_are_the_same_events) {
  const std::string stream = responses_framing + "event: a-much-longer-event-name\r\ndata: " +
                             std::string(300, 'L') + "\r\ndata: b\r\n\r\n" +
                             "data: c\rdata: d\r\r" + "event: e\ndata: {\"k\":\"v\"}\n\n" +
                             "event: ping\n\ndata: short\n\n";
  auto expected = parse_whole(stream);
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(expected.back(), (sse_event{"", "short"}));
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    sse_parser parser;
    std::vector<sse_event> events;
    auto copy = [&events](const sse_event& e) { events.push_back(e); };
    parser.feed(std::string_view(stream).substr(0, cut), copy);
    parser.feed(std::string_view(stream).substr(cut), copy);
    EXPECT_EQ(events, expected) << "split at byte " << cut;
  }
}

TEST(sse_parser, an_event_over_the_bound_stops_the_parser_with_an_error) {
  sse_parser parser(64);
  auto events = parser.feed("data: small\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(parser.error());
  events = parser.feed("data: " + std::string(40, 'x') + "\n");
  EXPECT_TRUE(events.empty());
  EXPECT_FALSE(parser.error());
  events = parser.feed("data: " + std::string(40, 'y') + "\n\n");
  EXPECT_TRUE(events.empty());
  ASSERT_TRUE(parser.error());
  EXPECT_NE(parser.error()->find("exceeds 64 bytes"), std::string::npos);
  EXPECT_TRUE(parser.feed("data: later\n\n").empty());  // stopped for good
}

TEST(sse_parser, a_line_without_end_over_the_bound_is_an_error) {
  sse_parser parser(100);
  for (int i = 0; i < 9; ++i) EXPECT_TRUE(parser.feed(std::string(10, 'z')).empty());
  EXPECT_FALSE(parser.error());
  parser.feed(std::string(20, 'z'));
  EXPECT_TRUE(parser.error());
}

// What a client resumes a broken stream with (MCP's GET stream): the id of
// the last event received whole, kept across events without one; an event
// cut off before its blank line does not count, nor does an id with NUL.
TEST(sse_parser, the_last_event_id_counts_once_its_event_is_whole) {
  sse_parser parser;
  EXPECT_EQ(parser.last_event_id(), "");
  EXPECT_EQ(parser.feed("id: a-1\ndata: one\n\n").size(), 1u);
  EXPECT_EQ(parser.last_event_id(), "a-1");
  EXPECT_EQ(parser.feed("data: two\n\n").size(), 1u);
  EXPECT_EQ(parser.last_event_id(), "a-1");  // no id: the buffer is kept
  EXPECT_TRUE(parser.feed("id: a-3\ndata: thr").empty());
  EXPECT_EQ(parser.last_event_id(), "a-1");  // not whole yet
  EXPECT_EQ(parser.feed("ee\n\n").size(), 1u);
  EXPECT_EQ(parser.last_event_id(), "a-3");
  parser.feed(std::string("id: bad\0id\ndata: four\n\n", 23));
  EXPECT_EQ(parser.last_event_id(), "a-3");
}

TEST(sse_parser, retry_is_kept_when_it_is_digits_only) {
  sse_parser parser;
  EXPECT_FALSE(parser.retry_ms());
  parser.feed("retry: 250\n\n");
  EXPECT_EQ(parser.retry_ms(), 250);
  parser.feed("retry: 3s\nretry: -1\nretry:\n\n");
  EXPECT_EQ(parser.retry_ms(), 250);
}

}  // namespace
}  // namespace parley::wire
