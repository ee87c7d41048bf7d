#include "protocol/client_requests.hpp"

#include <gtest/gtest.h>

namespace parley::protocol {
namespace {

json one_question() {
  return json::parse(R"({"questions": [{"id": "q", "header": "H", "question": "Why?"}]})");
}

TEST(client_requests, questions_are_normalised_to_the_schema) {
  auto qs = checked_questions(one_question());
  ASSERT_EQ(qs.size(), 1u);
  EXPECT_EQ(qs[0], json::parse(R"({"id": "q", "header": "H", "question": "Why?",
                                   "isOther": false, "isSecret": false, "options": null})"));
  auto params = user_input_params("t", "u", "call", qs);
  EXPECT_EQ(params["isBlocking"], true);
  EXPECT_FALSE(params.contains("autoResolutionMs"));
}

TEST(client_requests, malformed_questions_are_refused_with_a_reason) {
  for (const char* bad : {R"({})", R"({"questions": []})", R"({"questions": [{"id": "q"}]})",
                          R"({"questions": [{"id": "", "header": "H", "question": "Q"}]})",
                          R"({"questions": [{"id": "a", "header": "H", "question": "Q"},
                                            {"id": "a", "header": "H", "question": "Q"}]})",
                          R"({"questions": [{"id": "a", "header": "H", "question": "Q",
                                             "options": [{"label": "x"}]}]})",
                          R"([])"}) {
    EXPECT_THROW(checked_questions(json::parse(bad)), decode_error) << bad;
  }
}

TEST(client_requests, an_answer_names_only_questions_that_were_asked) {
  auto qs = checked_questions(one_question());
  auto ok = decode_user_input_answer(json::parse(R"({"answers": {"q": {"answers": ["a", "b"]}}})"), qs);
  EXPECT_EQ(ok, json::parse(R"({"answers": {"q": {"answers": ["a", "b"]}}})"));
  EXPECT_EQ(decode_user_input_answer(json::parse(R"({"answers": {}})"), qs)["answers"], json::object());
  for (const char* bad : {R"({})", R"({"answers": []})", R"({"answers": {"other": {"answers": []}}})",
                          R"({"answers": {"q": {"answers": "a"}}})", R"({"answers": {"q": {"answers": [1]}}})",
                          R"("accept")"}) {
    EXPECT_THROW(decode_user_input_answer(json::parse(bad), qs), decode_error) << bad;
  }
}

TEST(client_requests, a_client_tool_answer_is_checked) {
  auto ok = decode_dynamic_tool_answer(json::parse(
      R"({"contentItems": [{"type": "inputText", "text": "hi"}, {"type": "inputImage", "imageUrl": "data:x"}],
          "success": true})"));
  EXPECT_EQ(ok["contentItems"].size(), 2u);
  EXPECT_EQ(ok["success"], true);
  for (const char* bad : {R"({"contentItems": []})", R"({"success": true})",
                          R"({"contentItems": [{"type": "video"}], "success": true})",
                          R"({"contentItems": [{"type": "inputText"}], "success": true})",
                          R"({"contentItems": [], "success": "yes"})"}) {
    EXPECT_THROW(decode_dynamic_tool_answer(json::parse(bad)), decode_error) << bad;
  }
}

TEST(client_requests, dynamic_tools_flatten_namespaces_and_refuse_twins) {
  auto tools = decode_dynamic_tools(json::parse(R"([
      {"type": "function", "name": "a", "description": "A", "inputSchema": {"type": "object"}},
      {"type": "namespace", "name": "ns", "description": "N", "tools": [
          {"type": "function", "name": "a", "description": "A2", "inputSchema": {}}]}])"));
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_FALSE(tools[0].ns);
  EXPECT_EQ(*tools[1].ns, "ns");
  EXPECT_THROW(decode_dynamic_tools(json::parse(R"([
      {"type": "function", "name": "a", "description": "A", "inputSchema": {}},
      {"type": "function", "name": "a", "description": "B", "inputSchema": {}}])")),
               decode_error);
  EXPECT_THROW(decode_dynamic_tools(json::parse(R"([{"type": "function", "name": "a"}])")), decode_error);
}

TEST(client_requests, a_permission_request_is_read_as_codex_reads_the_tool_and_sent_as_the_schema_has_it) {
  auto asked = checked_permission_request(
      json::parse(R"({"permissions": {"file_system": {"write": ["/tmp/x/", "rel/../out"]},
                                      "network": {"enabled": true}},
                      "reason": "to build"})"),
      "/work");
  const auto& p = asked["permissions"];
  EXPECT_EQ(p["fileSystem"]["write"], json::array({"/tmp/x", "/work/out"}));
  EXPECT_EQ(p["fileSystem"]["read"], nullptr);
  EXPECT_EQ(p["fileSystem"]["entries"][0],
            json::parse(R"({"path": {"type": "path", "path": "/tmp/x"}, "access": "write"})"));
  EXPECT_EQ(p["network"]["enabled"], true);
  EXPECT_EQ(asked["reason"], "to build");
  auto only_network = checked_permission_request(
      json::parse(R"({"permissions": {"network": {"enabled": true}}})"), "/w");
  EXPECT_EQ(only_network["permissions"]["fileSystem"], nullptr);
  EXPECT_FALSE(only_network.contains("reason"));
  for (const char* wrong : {R"({"permissions": {}})", R"({"permissions": {"network": {"enabled": false}}})",
                            R"({"permissions": {"fileSystem": {"write": ["/x"]}}})",
                            R"({"permissions": {"file_system": {"write": [""]}}})",
                            R"({"permissions": {"file_system": {"exec": ["/x"]}}})",
                            R"({"permissions": {"network": {"enabled": true}}, "why": "x"})",
                            R"({"permissions": {"network": {"enabled": true}}, "environment_id": "remote"})",
                            R"({"reason": "no permissions"})", R"([1])"})
    EXPECT_THROW(checked_permission_request(json::parse(wrong), "/w"), decode_error) << wrong;
}

TEST(client_requests, a_permission_answer_is_normalised_and_defaults_to_the_turn) {
  auto granted = decode_permissions_answer(json::parse(R"({"permissions": {}})"));
  EXPECT_EQ(granted["scope"], "turn");
  EXPECT_EQ(granted["permissions"], json::object());
  EXPECT_FALSE(grants_anything(granted));
  auto entries = decode_permissions_answer(json::parse(R"({"permissions": {"fileSystem": {
      "entries": [{"path": {"type": "path", "path": "/a"}, "access": "write"},
                  {"path": {"type": "glob_pattern", "pattern": "/b/*"}, "access": "write"},
                  {"path": {"type": "path", "path": "/c"}, "access": "deny"}]}},
      "scope": "session", "strictAutoReview": false})"));
  EXPECT_EQ(entries["permissions"], json::parse(R"({"fileSystem": {"write": ["/a"]}})"));
  EXPECT_EQ(entries["scope"], "session");
  EXPECT_THROW(decode_permissions_answer(json::parse(R"({"permissions": {}, "scope": "forever"})")),
               decode_error);
  EXPECT_THROW(decode_permissions_answer(json::parse(R"({"scope": "turn"})")), decode_error);
  EXPECT_THROW(decode_permissions_answer(json::parse(R"({"permissions": {"disk": true}})")), decode_error);
  EXPECT_THROW(decode_permissions_answer(json::parse(R"({"permissions": {"fileSystem": {"write": "/a"}}})")),
               decode_error);
}

TEST(client_requests, an_answer_grants_only_what_was_asked) {
  auto asked = checked_permission_request(
      json::parse(R"({"permissions": {"file_system": {"write": ["/out"], "read": ["/data"]}}})"), "/w");
  auto answer = decode_permissions_answer(json::parse(R"({"permissions": {
      "fileSystem": {"write": ["/out/sub", "/etc", "/outside"], "read": ["/data", "/out/x", "/root"]},
      "network": {"enabled": true}}, "scope": "session"})"));
  auto granted = granted_within(asked["permissions"], answer, "/w");
  EXPECT_EQ(granted["permissions"],
            json::parse(R"({"fileSystem": {"write": ["/out/sub"], "read": ["/data", "/out/x"]}})"));
  EXPECT_EQ(granted["scope"], "session");
  // A path that climbs out of what was asked is not inside it.
  auto climbing = decode_permissions_answer(json::parse(R"({"permissions": {"fileSystem": {"write": ["/out/../etc"]}}})"));
  EXPECT_FALSE(grants_anything(granted_within(asked["permissions"], climbing, "/w")));
  // Network only when asked.
  auto net = checked_permission_request(json::parse(R"({"permissions": {"network": {"enabled": true}}})"), "/w");
  EXPECT_TRUE(grants_anything(granted_within(net["permissions"], answer, "/w")));
  EXPECT_EQ(json::parse(model_grant_output(granted_within(net["permissions"], answer, "/w"))),
            json::parse(R"({"permissions": {"network": {"enabled": true}, "file_system": null}, "scope": "session"})"));
  EXPECT_EQ(json::parse(model_grant_output({{"permissions", json::object()}, {"scope", "turn"}})),
            json::parse(R"({"permissions": {"network": null, "file_system": null}, "scope": "turn"})"));
}

TEST(client_requests, an_elicitation_answer_becomes_mcps_elicit_result) {
  auto accepted = decode_elicitation_answer(json::parse(
      R"({"action": "accept", "content": {"name": "Ada", "n": 3, "ok": true, "l": ["a"]},
          "_meta": {"client": 1}})"));
  EXPECT_EQ(accepted, json::parse(R"({"action": "accept", "_meta": {"client": 1},
                                     "content": {"name": "Ada", "n": 3, "ok": true, "l": ["a"]}})"));
  // Content only with an accept.
  EXPECT_EQ(decode_elicitation_answer(json::parse(R"({"action": "decline", "content": {"x": 1}})")),
            json::parse(R"({"action": "decline"})"));
  EXPECT_EQ(decode_elicitation_answer(json::parse(R"({"action": "cancel", "content": null})")),
            json::parse(R"({"action": "cancel"})"));
  EXPECT_EQ(decode_elicitation_answer(json::parse(R"({"action": "accept"})")),
            json::parse(R"({"action": "accept"})"));
  for (const char* bad : {R"({})", R"({"action": "maybe"})", R"({"action": 1})", R"("accept")",
                          R"({"action": "accept", "content": [1]})",
                          R"({"action": "accept", "content": {"x": {"y": 1}}})",
                          R"({"action": "accept", "content": {"x": [1]}})"}) {
    EXPECT_THROW(decode_elicitation_answer(json::parse(bad)), decode_error) << bad;
  }
}

}  // namespace
}  // namespace parley::protocol
