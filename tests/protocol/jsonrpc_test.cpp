#include "protocol/jsonrpc.hpp"

#include <gtest/gtest.h>

#include <random>

#include "protocol/json_codec.hpp"

namespace parley::protocol {
namespace {

incoming_message parse_ok(const std::string& line) {
  auto r = parse_message(line);
  EXPECT_TRUE(std::holds_alternative<incoming_message>(r)) << line;
  return std::holds_alternative<incoming_message>(r) ? std::get<incoming_message>(r)
                                                     : incoming_message{};
}

bool rejected(const std::string& line) {
  return std::holds_alternative<envelope_error>(parse_message(line));
}

TEST(jsonrpc, requests_keep_their_id_type) {
  auto a = parse_ok(R"({"id":7,"method":"m","params":{}})");
  EXPECT_EQ(a.type, incoming_message::kind::request);
  EXPECT_EQ(a.id, request_id{7});
  EXPECT_EQ(json(a.id), json(7));
  auto b = parse_ok(R"({"id":"7","method":"m"})");
  EXPECT_EQ(json(b.id), json("7"));
  EXPECT_FALSE(b.has_params);
  EXPECT_NE(a.id, b.id);
}

TEST(jsonrpc, jsonrpc_key_is_ignored) {
  auto m = parse_ok(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1}})");
  EXPECT_EQ(m.method, "m");
  EXPECT_EQ(m.params["x"], 1);
}

TEST(jsonrpc, notifications_responses_and_errors) {
  EXPECT_EQ(parse_ok(R"({"method":"initialized"})").type, incoming_message::kind::notification);
  auto r = parse_ok(R"({"id":0,"result":{"decision":"accept"}})");
  EXPECT_EQ(r.type, incoming_message::kind::response);
  EXPECT_EQ(r.result["decision"], "accept");
  auto e = parse_ok(R"({"error":{"code":-32000,"message":"x"},"id":3})");
  EXPECT_EQ(e.type, incoming_message::kind::error_response);
  EXPECT_EQ(e.error.code, -32000);
  EXPECT_EQ(e.error.message, "x");
}

TEST(jsonrpc, envelope_errors_get_no_reply) {
  EXPECT_TRUE(rejected("garbage"));
  EXPECT_TRUE(rejected(R"([{"id":1,"method":"m"}])"));
  EXPECT_TRUE(rejected(R"({"id":null,"method":"m"})"));
  EXPECT_TRUE(rejected(R"({"id":1.5,"method":"m"})"));
  EXPECT_TRUE(rejected(R"({"id":0})"));
  EXPECT_TRUE(rejected(R"("just a string")"));
  EXPECT_TRUE(rejected(R"({"id":1,"method":5})"));
}

std::string nested_arrays(size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

TEST(jsonrpc, a_request_nested_too_deep_is_rejected_for_its_id_without_building_the_value) {
  // 100,000 levels: copying such a value would overflow the stack.
  auto m = parse_ok(R"({"params":{"x":)" + nested_arrays(100000) + R"(},"id":"n","method":"m"})");
  EXPECT_EQ(m.type, incoming_message::kind::request);
  EXPECT_EQ(m.id, request_id{"n"});
  EXPECT_EQ(m.method, "m");
  ASSERT_TRUE(m.rejected.has_value());
  EXPECT_EQ(m.rejected->code, rpc_code::invalid_request);
  EXPECT_EQ(m.rejected->message,
            "Invalid request: recursion limit exceeded: JSON nested deeper than 128 levels");
  EXPECT_FALSE(m.has_params);
}

TEST(jsonrpc, nesting_is_bounded_at_128_levels_counting_the_envelope) {
  // envelope + params + 126 arrays = 128 levels: accepted as is.
  auto ok = parse_ok(R"({"id":1,"method":"m","params":{"x":)" + nested_arrays(126) + "}}");
  EXPECT_FALSE(ok.rejected.has_value());
  EXPECT_TRUE(ok.params["x"].is_array());
  auto deep = parse_ok(R"({"id":1,"method":"m","params":{"x":)" + nested_arrays(127) + "}}");
  EXPECT_TRUE(deep.rejected.has_value());
  // Objects count the same: envelope + 127 objects is the limit.
  std::string objects = "1";
  for (int i = 0; i < 127; ++i) objects = R"({"a":)" + objects + "}";
  EXPECT_FALSE(parse_ok(R"({"id":1,"method":"m","params":)" + objects + "}").rejected);
  objects = R"({"a":)" + objects + "}";
  EXPECT_TRUE(parse_ok(R"({"id":1,"method":"m","params":)" + objects + "}").rejected);
}

TEST(jsonrpc, deep_notifications_are_dropped_and_deep_responses_become_errors) {
  EXPECT_TRUE(rejected(R"({"method":"initialized","params":)" + nested_arrays(100000) + "}"));
  auto r = parse_ok(R"({"id":0,"result":{"decision":)" + nested_arrays(100000) + "}}");
  EXPECT_EQ(r.type, incoming_message::kind::error_response);
  EXPECT_EQ(r.error.code, rpc_code::invalid_request);
  EXPECT_TRUE(r.result.is_null());
  EXPECT_TRUE(rejected(nested_arrays(100000)));
}

TEST(jsonrpc, encoders_never_send_jsonrpc) {
  auto resp = json::parse(encode_response(request_id{"a"}, json{{"x", 1}}));
  EXPECT_EQ(resp, (json{{"id", "a"}, {"result", {{"x", 1}}}}));
  auto err = json::parse(encode_error(request_id{2}, -32600, "Not initialized"));
  EXPECT_EQ(err, (json{{"id", 2}, {"error", {{"code", -32600}, {"message", "Not initialized"}}}}));
  auto note = json::parse(encode_notification("turn/started", json::object(), 5));
  EXPECT_EQ(note, (json{{"method", "turn/started"}, {"params", json::object()}, {"emittedAtMs", 5}}));
  auto req = json::parse(encode_request(request_id{0}, "x/y", json::object()));
  EXPECT_EQ(req, (json{{"id", 0}, {"method", "x/y"}, {"params", json::object()}}));
}

// The envelopes are written around their body's text: byte for byte what
// nlohmann writes for the whole envelope as one DOM (the path they replace).
TEST(jsonrpc, envelopes_match_nlohmann_byte_for_byte) {
  std::vector<request_id> ids{request_id{int64_t{0}}, request_id{int64_t{-1}},
                              request_id{INT64_MAX}, request_id{INT64_MIN},
                              request_id{std::string{}}, request_id{std::string{"a\"\\\n\x01"}},
                              request_id{std::string{"caf\xc3\xa9"}}, request_id{std::string{"\xff\xc3"}}};
  std::mt19937 rng(23);  // seeded: the same ids every run
  for (int k = 0; k < 300; ++k) {
    std::string s(rng() % 8, '\0');
    for (auto& ch : s) ch = static_cast<char>(rng() % 256);
    ids.push_back(request_id{std::move(s)});
  }
  std::vector<json> bodies{json::object(), json::array(), json(nullptr), json(3.5), json("x"),
                           json{{"thread", {{"id", "t"}, {"preview", "bad \xed\xa0\x80 utf8"},
                                            {"turns", json::array({1, "\n"})}}},
                                {"approvalPolicy", "on-request"}}};
  for (const auto& id : ids)
    for (const auto& body : bodies) {
      EXPECT_EQ(encode_response(id, body), dump_line(json{{"id", id}, {"result", body}}));
      EXPECT_EQ(encode_request(id, "item/commandExecution/requestApproval", body),
                dump_line(json{{"id", id},
                               {"method", "item/commandExecution/requestApproval"},
                               {"params", body}}));
    }
  for (const auto& body : bodies)
    EXPECT_EQ(encode_notification("turn/started", body, 1762500000123),
              dump_line(json{{"method", "turn/started"}, {"params", body},
                             {"emittedAtMs", 1762500000123}}));
}

// The writer appends each line's '\n': a line made with no room for it
// doubles its buffer there, and a slow reader's queue holds thousands of
// lines (issue 22's bound counts their sizes, not their buffers).
TEST(jsonrpc, envelopes_leave_room_for_the_line_end) {
  std::string big(5000, 'x');
  std::vector<std::string> lines;  // moved in: a copy has a capacity of its own
  lines.push_back(encode_response(request_id{int64_t{7}}, json{{"text", big}}));
  lines.push_back(encode_response(request_id{std::string{"req-123456789"}}, json::object()));
  lines.push_back(encode_request(request_id{int64_t{42}}, "item/commandExecution/requestApproval",
                                 json{{"command", big}}));
  lines.push_back(encode_notification("item/agentMessage/delta", json{{"delta", big}},
                                      1762500000123));
  lines.push_back(encode_notification_raw("item/agentMessage/delta",
                                          "{\"delta\":\"" + big + "\"}", 1762500000123));
  for (auto& line : lines) {
    auto before = line.capacity();
    EXPECT_GT(before, line.size()) << line.substr(0, 60);
    line += '\n';
    EXPECT_EQ(line.capacity(), before) << line.substr(0, 60);
  }
}

}  // namespace
}  // namespace parley::protocol
