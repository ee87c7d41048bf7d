// An MCP server's elicitation/create, judged before anybody is asked: which
// thread it goes to (or why none), what a malformed one is, and what a
// client is sent.

#include <gtest/gtest.h>

#include "actors/mcp/elicitation.hpp"

namespace parley::mcp {
namespace {

json form(json properties, json extra = json::object()) {
  json params = {{"message", "Who are you?"},
                 {"requestedSchema", {{"type", "object"}, {"properties", std::move(properties)}}}};
  for (auto it = extra.begin(); it != extra.end(); ++it) params[it.key()] = it.value();
  return params;
}

TEST(elicitation_judge, goes_to_the_one_thread_with_calls_in_flight) {
  auto r = route_elicitation({{"t1", ""}});
  ASSERT_TRUE(r.owner);
  EXPECT_EQ(r.owner->thread_id, "t1");
  EXPECT_EQ(r.owner->turn_id, "");
  r = route_elicitation({{"t1", "turn-a"}, {"t1", "turn-a"}});
  ASSERT_TRUE(r.owner);
  EXPECT_EQ(r.owner->turn_id, "turn-a");
}

TEST(elicitation_judge, a_thread_with_calls_of_two_turns_names_no_turn) {
  auto r = route_elicitation({{"t1", "turn-a"}, {"t1", ""}});
  ASSERT_TRUE(r.owner);
  EXPECT_EQ(r.owner->thread_id, "t1");
  EXPECT_EQ(r.owner->turn_id, "");
}

TEST(elicitation_judge, no_call_or_calls_of_two_threads_go_nowhere) {
  auto none = route_elicitation({});
  EXPECT_FALSE(none.owner);
  EXPECT_NE(none.why_not.find("no tools/call"), std::string::npos);
  auto two = route_elicitation({{"t1", ""}, {"t2", ""}, {"t1", ""}});
  EXPECT_FALSE(two.owner);
  EXPECT_NE(two.why_not.find("2 threads"), std::string::npos);
}

TEST(elicitation_judge, a_form_of_every_field_kind_is_fine) {
  auto params = form({{"name", {{"type", "string"}, {"title", "Name"}, {"minLength", 1}}},
                      {"email", {{"type", "string"}, {"format", "email"}}},
                      {"age", {{"type", "integer"}, {"minimum", 0}, {"maximum", 150}}},
                      {"ok", {{"type", "boolean"}, {"default", false}}},
                      {"pet", {{"type", "string"}, {"enum", {"cat", "dog"}}, {"enumNames", {"Cat", "Dog"}}}},
                      {"hero", {{"type", "string"}, {"oneOf", {{{"const", "h1"}, {"title", "Superman"}}}}}},
                      {"tools", {{"type", "array"}, {"items", {{"type", "string"}, {"enum", {"a", "b"}}}}}},
                      {"fish", {{"type", "array"}, {"items", {{"anyOf", {{{"const", "f"}, {"title", "F"}}}}}}}}});
  params["requestedSchema"]["required"] = {"name"};
  EXPECT_EQ(elicitation_problem(params), "");
  // MCP 2025-06-18 has no `mode`: form is meant.
  EXPECT_EQ(elicitation_problem(form(json::object(), {{"mode", "form"}})), "");
}

TEST(elicitation_judge, malformed_requests_say_what_is_wrong) {
  EXPECT_NE(elicitation_problem(json::array()), "");
  EXPECT_NE(elicitation_problem({{"message", "x"}}).find("requestedSchema"), std::string::npos);
  auto no_message = form(json::object());
  no_message.erase("message");
  EXPECT_NE(elicitation_problem(no_message).find("message"), std::string::npos);
  auto not_object = form(json::object());
  not_object["requestedSchema"]["type"] = "array";
  EXPECT_NE(elicitation_problem(not_object), "");
  EXPECT_NE(elicitation_problem(form({{"x", {{"type", "object"}}}})).find("properties.x"),
            std::string::npos);
  EXPECT_NE(elicitation_problem(form({{"x", "string"}})), "");
  EXPECT_NE(elicitation_problem(form({{"x", {{"type", "string"}, {"pattern", ".*"}}}})).find("pattern"),
            std::string::npos);
  EXPECT_NE(elicitation_problem(form({{"x", {{"type", "array"}, {"items", {{"type", "number"}}}}}})), "");
  auto extra = form(json::object());
  extra["requestedSchema"]["additionalProperties"] = false;
  EXPECT_NE(elicitation_problem(extra), "");
  EXPECT_NE(elicitation_problem(form({{"x", {{"type", "string"}, {"maxLength", -1}}}})), "");
  auto required = form(json::object());
  required["requestedSchema"]["required"] = {1};
  EXPECT_NE(elicitation_problem(required), "");
}

TEST(elicitation_judge, url_mode_needs_a_message_a_url_and_an_id) {
  json url = {{"mode", "url"}, {"message", "log in"}, {"url", "https://x"}, {"elicitationId", "e"}};
  EXPECT_EQ(elicitation_problem(url), "");
  EXPECT_TRUE(is_url_mode(url));
  EXPECT_FALSE(is_url_mode(form(json::object())));
  for (const char* key : {"message", "url", "elicitationId"}) {
    auto missing = url;
    missing.erase(key);
    EXPECT_NE(elicitation_problem(missing).find(key), std::string::npos) << key;
    auto wrong = url;
    wrong[key] = 7;
    EXPECT_NE(elicitation_problem(wrong), "") << key;
  }
  auto empty = url;
  empty["url"] = "";
  EXPECT_NE(elicitation_problem(empty), "");
  // Neither a schema nor anything else of form mode is looked at.
  url["requestedSchema"] = 1;
  EXPECT_EQ(elicitation_problem(url), "");
}

TEST(elicitation_judge, other_modes_are_not_offered) {
  auto other = form(json::object(), {{"mode", "openai/form"}});
  EXPECT_NE(elicitation_problem(other).find("not offered"), std::string::npos);
  EXPECT_NE(elicitation_problem(form(json::object(), {{"mode", 1}})), "");
}

TEST(elicitation_judge, a_url_mode_client_is_sent_codex_params) {
  json url = {{"mode", "url"}, {"message", "log in"}, {"url", "https://x/y"}, {"elicitationId", "e-1"}};
  auto p = elicitation_request_params("everything", {"t1", "turn-a"}, url);
  // Codex 0.169's keys, `_meta` null when the server sent none.
  EXPECT_EQ(p, json({{"threadId", "t1"}, {"turnId", "turn-a"}, {"serverName", "everything"},
                     {"mode", "url"}, {"_meta", nullptr}, {"message", "log in"},
                     {"url", "https://x/y"}, {"elicitationId", "e-1"}}));
  url["_meta"] = {{"k", 1}};
  EXPECT_EQ(elicitation_request_params("s", {"t1", ""}, url)["_meta"], url["_meta"]);
}

TEST(elicitation_judge, a_url_mode_answer_carries_no_content) {
  json answer = {{"action", "accept"}, {"content", {{"x", 1}}}, {"_meta", {{"k", 2}}}};
  EXPECT_EQ(elicit_result_of_answer(answer, true),
            json({{"action", "accept"}, {"_meta", {{"k", 2}}}}));
  EXPECT_EQ(elicit_result_of_answer(answer, false), answer);
}

TEST(elicitation_judge, the_client_is_sent_codex_params) {
  auto params = form({{"n", {{"type", "string"}}}}, {{"_meta", {{"k", 1}}}});
  auto p = elicitation_request_params("everything", {"t1", ""}, params);
  EXPECT_EQ(p["threadId"], "t1");
  EXPECT_TRUE(p["turnId"].is_null());
  EXPECT_EQ(p["serverName"], "everything");
  EXPECT_EQ(p["mode"], "form");
  EXPECT_EQ(p["message"], "Who are you?");
  EXPECT_EQ(p["requestedSchema"], params["requestedSchema"]);
  EXPECT_EQ(p["_meta"], params["_meta"]);
  EXPECT_EQ(elicitation_request_params("s", {"t1", "turn-a"}, params)["turnId"], "turn-a");
  EXPECT_EQ(elicit_result("decline"), json({{"action", "decline"}}));
}

TEST(elicitation_judge, a_form_without_meta_is_sent_with_meta_null_as_codex_sends_it) {
  auto params = form({{"n", {{"type", "string"}}}});
  EXPECT_EQ(elicitation_request_params("annot", {"t1", "turn-a"}, params),
            json({{"threadId", "t1"}, {"turnId", "turn-a"}, {"serverName", "annot"},
                  {"mode", "form"}, {"_meta", nullptr}, {"message", "Who are you?"},
                  {"requestedSchema", params["requestedSchema"]}}));
}

}  // namespace
}  // namespace parley::mcp
