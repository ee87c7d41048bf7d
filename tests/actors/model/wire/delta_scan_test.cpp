#include "actors/model/wire/delta_scan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "actors/model/wire/responses_stream.hpp"

namespace parley::wire {
namespace delta_scan_tests {

// What the scanner gives must be what nlohmann's path gives; where it
// declines, nlohmann decides anyway. So each case checks agreement, and the
// cases the scanner is for check that it did not decline.
std::string describe(const std::optional<stream_event>& e) {
  if (!e) return "nothing";
  if (auto* t = std::get_if<text_delta>(&*e)) return "text[" + t->item_id + "|" + t->delta + "]";
  if (auto* r = std::get_if<reasoning_delta>(&*e)) {
    return std::string(r->summary ? "summary[" : "raw[") + r->item_id + "|" + r->delta + "|"
           + std::to_string(r->index) + "]";
  }
  if (auto* err = std::get_if<stream_error>(&*e)) return "error[" + err->message + "]";
  return "other event";
}

/// Whether the scanner agreed with nlohmann (or declined). Returns whether
/// it read the event itself.
bool agrees(const sse_event& e) {
  auto fast = scan_delta_event(e);
  if (!fast) return false;
  auto dom = map_responses_event_dom(e);
  EXPECT_EQ(describe(fast), describe(dom)) << "event '" << e.event << "' data: " << e.data;
  return true;
}

sse_event text_event(const std::string& delta_json) {
  return {"response.output_text.delta",
          R"({"type":"response.output_text.delta","sequence_number":9,"item_id":"msg_02",)"
          R"("output_index":1,"content_index":0,"delta":)" + delta_json + "}"};
}

TEST(delta_scan, reads_the_deltas_providers_send) {
  // OpenAI's shape (with logprobs), the mock's (keys sorted), reasoning of both kinds.
  EXPECT_TRUE(agrees(text_event(R"("Let me ")")));
  EXPECT_TRUE(agrees({"response.output_text.delta",
                      R"({"content_index":0,"delta":"w1 ","item_id":"msg_1","output_index":0,)"
                      R"("sequence_number":3,"type":"response.output_text.delta"})"}));
  EXPECT_TRUE(agrees({"response.output_text.delta",
                      R"({"type":"response.output_text.delta","item_id":"m","delta":"x",)"
                      R"("logprobs":[{"token":"x","logprob":-1,"top_logprobs":[]}],"obfuscation":"ab"})"}));
  EXPECT_TRUE(agrees({"response.reasoning_summary_text.delta",
                      R"({"type":"response.reasoning_summary_text.delta","item_id":"rs_01",)"
                      R"("output_index":0,"summary_index":2,"delta":"**Listing files**"})"}));
  EXPECT_TRUE(agrees({"response.reasoning_text.delta",
                      R"({"type":"response.reasoning_text.delta","item_id":"rs_01",)"
                      R"("content_index":-3,"delta":"thinking"})"}));
  // No event name: the data's type decides; no type: the event name does.
  EXPECT_TRUE(agrees({"", R"({"type":"response.output_text.delta","delta":"a"})"}));
  EXPECT_TRUE(agrees({"response.output_text.delta", R"({"delta":"a","item_id":"i"})"}));
  auto e = scan_delta_event(text_event(R"("tab\there \"q\" \\ \/ \b\f\n\r é 中 😀")"));
  ASSERT_TRUE(e);
  EXPECT_EQ(std::get<text_delta>(*e).delta, "tab\there \"q\" \\ / \b\f\n\r é 中 😀");
  EXPECT_EQ(std::get<text_delta>(*e).item_id, "msg_02");
}

TEST(delta_scan, leaves_everything_else_to_nlohmann) {
  const std::vector<sse_event> declined = {
      {"response.created", R"({"type":"response.created","response":{"id":"r"}})"},
      {"response.output_item.done", R"({"type":"response.output_item.done","item":{}})"},
      {"response.output_text.delta", R"({"type":"response.output_text.done","delta":"x"})"},
      text_event(R"("\u00e9")"),                       // \u escapes
      text_event(R"(1)"),                              // a delta that is no string: an error
      {"response.output_text.delta", R"({"delta":"a","n":1.5})"},   // fractions
      {"response.output_text.delta", R"({"delta":"a","n":1e3})"},   // exponents
      {"response.output_text.delta", R"({"delta":"a","n":1234567890123456789})"},
      {"response.output_text.delta", R"({"delta":"a","n":-99999999999999999999})"},  // no overflow
      {"response.output_text.delta", R"({"delta":"a","n":01})"},
      {"response.output_text.delta", R"({"delta":"a","de\u006cta":"b"})"},  // escaped key
      {"response.output_text.delta", "\xEF\xBB\xBF{\"delta\":\"a\"}"},       // a BOM
      {"response.output_text.delta", R"({"delta":"a"} x)"},
      {"response.output_text.delta", R"({"delta":"a",})"},
      {"response.output_text.delta", R"([{"delta":"a"}])"},
      {"response.output_text.delta", "{\"delta\":\"a\x01\"}"},
      {"response.output_text.delta", "{\"delta\":\"\xC0\xAF\"}"},       // overlong
      {"response.output_text.delta", "{\"delta\":\"\xED\xA0\x80\"}"},   // a surrogate
      {"response.output_text.delta", "{\"delta\":\"\xF4\x90\x80\x80\"}"},  // past U+10FFFF
      {"response.output_text.delta", "{\"delta\":\"\xE2\x82\"}"},       // cut short
      {"response.output_text.delta",
       R"({"delta":"a","n":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]})"},  // deep nesting
      {"response.output_text.delta", "[DONE]"},
  };
  for (const auto& e : declined) EXPECT_FALSE(scan_delta_event(e)) << e.data;
}

TEST(delta_scan, agrees_where_it_reads_quirks) {
  // Repeated keys (the last wins), a type that is no string (the event name
  // counts), indexes that are no integers (0), whitespace everywhere.
  EXPECT_TRUE(agrees({"response.output_text.delta", R"({"delta":"a","delta":"b","item_id":"x","item_id":2})"}));
  EXPECT_TRUE(agrees({"response.reasoning_text.delta", R"({"type":7,"delta":"a","content_index":"3"})"}));
  EXPECT_TRUE(agrees({"response.reasoning_summary_text.delta",
                      R"({"delta":"a","summary_index":4,"summary_index":null})"}));
  EXPECT_TRUE(agrees({"response.output_text.delta", " \t\r\n{ \"delta\" : \"a\" , \"x\" : [ true , false , null , { } , [ ] ] }\n "}));
  EXPECT_TRUE(agrees({"response.output_text.delta", R"({"delta":"","item_id":""})"}));
  EXPECT_TRUE(agrees({"response.output_text.delta", R"({"delta":"a","n":-0})"}));
}

TEST(delta_scan, agrees_over_every_byte_and_utf8_edges) {
  int read = 0;
  for (int b = 0; b < 256; ++b) {
    read += agrees(text_event("\"a" + std::string(1, static_cast<char>(b)) + "b\""));
    read += agrees(text_event("\"\\" + std::string(1, static_cast<char>(b)) + "\""));
    for (int c : {0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0}) {
      std::string two{static_cast<char>(b), static_cast<char>(c)};
      read += agrees(text_event("\"" + two + "\""));
      read += agrees(text_event("\"" + two + "\x80\""));
      read += agrees(text_event("\"" + two + "\x80\x80\""));
    }
  }
  // ASCII but '"', '\\' and controls, the 8 simple escapes, and the
  // well-formed sequences among the leads and second bytes tried.
  EXPECT_GT(read, 90 + 8 + 200);
}

/// One to three random edits (a byte replaced, inserted or erased) from
/// JSON's own characters and UTF-8's edges.
void mutate(std::string& data, std::mt19937& gen) {
  static const std::string alphabet
      = "{}[]:,\"\\ -0123456789.eEtrufalsn\x01\x7f\x80\xbf\xc3\xe2\xf0\xf4\xff";
  int edits = 1 + static_cast<int>(gen() % 3);
  for (int k = 0; k < edits && !data.empty(); ++k) {
    auto at = gen() % data.size();
    char c = alphabet[gen() % alphabet.size()];
    switch (gen() % 3) {
      case 0: data[at] = c; break;
      case 1: data.insert(data.begin() + static_cast<std::ptrdiff_t>(at), c); break;
      default: data.erase(at, 1); break;
    }
  }
}

TEST(delta_scan, agrees_over_seeded_random_mutations) {
  std::mt19937 gen(23);
  const std::vector<sse_event> seeds = {
      text_event(R"("hello é 中 😀 \n\"")"),
      {"response.reasoning_summary_text.delta",
       R"({"type":"response.reasoning_summary_text.delta","item_id":"rs","summary_index":12,"delta":"x","l":[{"a":[1,-2,true]}]})"},
      {"", R"({"type":"response.reasoning_text.delta","content_index":0,"delta":"y"})"},
  };
  int read = 0;
  for (int i = 0; i < 20000; ++i) {
    auto e = seeds[i % seeds.size()];
    mutate(e.data, gen);
    read += agrees(e);
  }
  EXPECT_GT(read, 1000);  // many mutations leave an event the scanner reads
}

/// The whole mapping (scanner first) against nlohmann's alone.
bool maps_alike(const sse_event& e) {
  auto fast = map_responses_event(e);
  auto dom = map_responses_event_dom(e);
  EXPECT_EQ(describe(fast), describe(dom)) << "event '" << e.event << "' data: " << e.data;
  return describe(fast) == describe(dom);
}

// The events parley does not use are read by the scanner too (no DOM of a
// whole text to drop it): they must map to nothing exactly when nlohmann's
// path maps them to nothing, and to its error otherwise.
TEST(delta_scan, reads_the_events_parley_ignores_as_nlohmann_does) {
  const std::string text = R"(w1 w2 \"q\" é 中 😀 \n)";
  const std::vector<sse_event> ignored = {
      {"response.output_text.done",
       R"({"content_index":0,"item_id":"msg_1","output_index":0,"sequence_number":203,)"
       R"("text":")" + text + R"(","type":"response.output_text.done"})"},
      {"response.content_part.added",
       R"({"content_index":0,"item_id":"msg_1","output_index":0,"part":{"annotations":[],)"
       R"("text":"","type":"output_text"},"sequence_number":2,"type":"response.content_part.added"})"},
      {"response.in_progress", R"({"type":"response.in_progress","response":{"id":"r","n":[1,-2]}})"},
      {"", R"({"type":"response.content_part.done","part":{"text":"x"}})"},
      {"response.content_part.done", R"({"part":{"text":"x"}})"},  // no type: the name's
      {"keepalive", R"({})"},
      {"response.output_text.done", R"({"type":"response.output_text.done","type":1})"},
      {"response.output_text.done", R"({"type":"response.output_text\n.done"})"},
  };
  for (const auto& e : ignored) {
    auto type = scanned_type(e);
    ASSERT_TRUE(type) << e.data;  // read by the scanner, not declined
    EXPECT_TRUE(maps_alike(e));
    EXPECT_FALSE(map_responses_event(e)) << e.data;
  }
  EXPECT_EQ(scanned_type(ignored[0]), "response.output_text.done");
  EXPECT_EQ(scanned_type(ignored[6]), "response.output_text.done");  // a type that is no string
  EXPECT_EQ(scanned_type(ignored[7]), "response.output_text\n.done");  // escapes decoded
  // What the scanner declines or names as an event parley uses, nlohmann maps.
  const std::vector<sse_event> others = {
      {"response.output_text.done", R"({"type":"response.output_text.done","text":"\u00e9"})"},
      {"response.output_text.done", R"({"type":"response.output_text.done","n":1.5})"},
      {"response.output_text.done", R"({"type":"response.output_text.done",})"},
      {"response.output_text.done", R"([1])"},
      {"response.output_text.done", R"("text")"},
      {"response.output_text.done", "{\"text\":\"\xC0\xAF\"}"},
      {"response.content_part.done", R"({"type":"response.completed","response":{"id":"r"}})"},
      {"", R"({"type":"response.output_item.done","item":{"type":"message"}})"},
      {"", R"({"type":"error","message":"m"})"},
      {"error", R"({"message":"m"})"},
      {"response.failed", R"({"type":"response.in_progress"})"},
  };
  for (const auto& e : others) EXPECT_TRUE(maps_alike(e));
  EXPECT_EQ(describe(map_responses_event(others[6])), "other event");  // completed
}

TEST(delta_scan, maps_mutations_of_ignored_events_as_nlohmann_does) {
  std::mt19937 gen(19);
  const std::vector<sse_event> seeds = {
      {"response.output_text.done",
       R"({"content_index":0,"item_id":"msg","text":"hello é 中 😀 \n\"","type":"response.output_text.done"})"},
      {"", R"({"type":"response.content_part.added","part":{"annotations":[],"text":"","type":"output_text"}})"},
      {"response.content_part.done", R"({"part":{"text":"x","l":[{"a":[1,-2,true,null]}]}})"},
  };
  int read = 0;
  for (int i = 0; i < 20000; ++i) {
    auto e = seeds[i % seeds.size()];
    mutate(e.data, gen);
    maps_alike(e);
    read += scanned_type(e).has_value();
  }
  EXPECT_GT(read, 1000);  // many mutations leave an event the scanner reads
}

TEST(delta_scan, a_responses_stream_gives_the_same_events_either_way) {
  std::string body;
  for (int i = 0; i < 50; ++i) {
    body += "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
            "\"item_id\":\"msg_1\",\"delta\":\"w" + std::to_string(i) + " \"}\n\n";
  }
  responses_stream stream;
  auto events = stream.feed(body);
  ASSERT_EQ(events.size(), 50u);
  sse_parser sse;
  auto raw = sse.feed(body);
  ASSERT_EQ(raw.size(), 50u);
  for (size_t i = 0; i < raw.size(); ++i) {
    EXPECT_EQ(describe(events[i]), describe(map_responses_event_dom(raw[i])));
  }
}

}  // namespace delta_scan_tests
}  // namespace parley::wire
