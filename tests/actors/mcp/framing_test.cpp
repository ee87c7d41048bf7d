// MCP's stdio framing: what parley sends, and how it judges what a server
// sends (a hostile one included).

#include <gtest/gtest.h>

#include "actors/mcp/framing.hpp"

namespace parley::mcp {
namespace {

TEST(mcp_framing, requests_and_notifications_are_one_line_of_json_rpc) {
  auto line = request_line(7, "tools/call", {{"name", "echo"}, {"arguments", {{"message", "a\nb"}}}});
  EXPECT_EQ(line.find('\n'), std::string::npos);
  auto j = json::parse(line);
  EXPECT_EQ(j["jsonrpc"], "2.0");
  EXPECT_EQ(j["id"], 7);
  EXPECT_EQ(j["method"], "tools/call");
  EXPECT_EQ(j["params"]["arguments"]["message"], "a\nb");
  auto note = json::parse(notification_line("notifications/initialized", nullptr));
  EXPECT_FALSE(note.contains("id"));
  EXPECT_FALSE(note.contains("params"));
  auto init = initialize_params("1.2.3");
  EXPECT_EQ(init["protocolVersion"], requested_protocol_version);
  EXPECT_EQ(init["clientInfo"]["name"], "parley");
  // Elicitation in form and URL mode, as Codex 0.169 declares it; no
  // roots, no sampling.
  EXPECT_EQ(init["capabilities"],
            json({{"elicitation", {{"form", json::object()}, {"url", json::object()}}}}));
}

TEST(mcp_framing, invalid_utf8_in_arguments_does_not_throw) {
  auto line = request_line(1, "tools/call", {{"name", std::string{"\xff\xfe"}}});
  EXPECT_NO_THROW(json::parse(line));
}

TEST(mcp_framing, parses_each_kind) {
  auto r = parse_line(R"({"jsonrpc":"2.0","id":3,"result":{"tools":[]}})");
  ASSERT_TRUE(r.message) << r.problem;
  EXPECT_EQ(r.message->what, incoming::kind::response);
  EXPECT_EQ(r.message->id, 3);
  auto e = parse_line(R"({"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown tool"}})");
  ASSERT_TRUE(e.message) << e.problem;
  EXPECT_EQ(e.message->what, incoming::kind::error_response);
  EXPECT_EQ(e.message->error_code, -32602);
  EXPECT_EQ(e.message->error_message, "Unknown tool");
  auto q = parse_line(R"({"jsonrpc":"2.0","id":"s1","method":"ping"})");
  ASSERT_TRUE(q.message);
  EXPECT_EQ(q.message->what, incoming::kind::request);
  EXPECT_EQ(q.message->id, "s1");
  auto n = parse_line(R"({"jsonrpc":"2.0","method":"notifications/message","params":{"data":1}})");
  ASSERT_TRUE(n.message);
  EXPECT_EQ(n.message->what, incoming::kind::notification);
  EXPECT_EQ(n.message->params["data"], 1);
  auto blank = parse_line("  \r");
  EXPECT_FALSE(blank.message);
  EXPECT_TRUE(blank.problem.empty());
}

TEST(mcp_framing, names_what_is_wrong_with_a_hostile_line) {
  struct bad {
    const char* line;
    const char* problem;
  };
  for (auto b : {bad{"{not json", "not JSON"},
                 bad{"[1,2]", "batch"},
                 bad{"42", "not a JSON object"},
                 bad{R"({"id":1,"result":{}})", "jsonrpc"},
                 bad{R"({"jsonrpc":"1.0","id":1,"result":{}})", "jsonrpc"},
                 bad{R"({"jsonrpc":"2.0","id":1.5,"result":{}})", "neither a string nor an integer"},
                 bad{R"({"jsonrpc":"2.0","id":1})", "exactly one of result and error"},
                 bad{R"({"jsonrpc":"2.0","id":1,"result":{},"error":{}})", "exactly one"},
                 bad{R"({"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}})", "integer code"},
                 bad{R"({"jsonrpc":"2.0","method":7})", "method that is not a string"},
                 bad{R"({"jsonrpc":"2.0"})", "neither a method nor an id"}}) {
    auto r = parse_line(b.line);
    EXPECT_FALSE(r.message) << b.line;
    EXPECT_NE(r.problem.find(b.problem), std::string::npos) << b.line << " -> " << r.problem;
  }
}

TEST(mcp_framing, splitter_cuts_lines_across_reads) {
  line_splitter s;
  std::vector<std::string> out;
  EXPECT_TRUE(s.feed("{\"a\":", out));
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(s.feed("1}\r\n{\"b\":2}\n{\"c\"", out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "{\"a\":1}");  // the \r of a CRLF goes
  EXPECT_EQ(out[1], "{\"b\":2}");
  EXPECT_TRUE(s.feed(":3}\n", out));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2], "{\"c\":3}");
}

TEST(mcp_framing, splitter_refuses_a_line_past_its_bound) {
  line_splitter s{10};
  std::vector<std::string> out;
  EXPECT_TRUE(s.feed("0123456789\n", out));  // exactly the bound is fine
  EXPECT_TRUE(s.feed("01234", out));
  EXPECT_FALSE(s.feed("56789x", out));       // 11 bytes without an end
  EXPECT_TRUE(s.overflowed());
  EXPECT_FALSE(s.feed("\n", out));           // and nothing more is taken
  EXPECT_EQ(out.size(), 1u);
}

TEST(mcp_framing, protocol_revisions) {
  EXPECT_TRUE(supported_protocol_version("2025-06-18"));
  EXPECT_TRUE(supported_protocol_version("2024-11-05"));
  EXPECT_FALSE(supported_protocol_version("2023-01-01"));
  EXPECT_FALSE(supported_protocol_version(""));
}

}  // namespace
}  // namespace parley::mcp
