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

TEST(client_requests, permissions_keep_what_parley_applies_and_default_to_the_turn) {
  auto asked = checked_permission_request(json::parse(
      R"({"permissions": {"fileSystem": {"write": ["/tmp/x"]}, "network": {"enabled": true}},
          "reason": "to build"})"));
  EXPECT_EQ(asked["permissions"]["fileSystem"]["write"], json::array({"/tmp/x"}));
  EXPECT_EQ(asked["permissions"]["network"]["enabled"], true);
  EXPECT_EQ(asked["reason"], "to build");
  EXPECT_THROW(checked_permission_request(json::parse(R"({"permissions": {}})")), decode_error);
  EXPECT_THROW(checked_permission_request(json::parse(R"({"permissions": {"disk": true}})")),
               decode_error);
  auto granted = decode_permissions_answer(json::parse(R"({"permissions": {}})"));
  EXPECT_EQ(granted["scope"], "turn");
  EXPECT_EQ(granted["permissions"], json::object());
  EXPECT_EQ(decode_permissions_answer(
                json::parse(R"({"permissions": {"network": {"enabled": true}}, "scope": "session"})"))["scope"],
            "session");
  EXPECT_THROW(decode_permissions_answer(json::parse(R"({"permissions": {}, "scope": "forever"})")),
               decode_error);
  EXPECT_THROW(decode_permissions_answer(json::parse(R"({"scope": "turn"})")), decode_error);
}

}  // namespace
}  // namespace parley::protocol
