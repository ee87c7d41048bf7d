// The HTTP request a turn's model sends, and its retry rules, as data.
#include "actors/model/model_request.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace parley {
namespace {

using json = nlohmann::json;

provider_setup setup_for(model_config::wire_api wire) {
  provider_setup s;
  s.provider.id = "local";
  s.provider.base_url = "http://127.0.0.1:9/v1/";
  s.provider.wire = wire;
  s.provider.query_params = {{"api-version", "2025-04-01"}};
  s.provider.http_headers = {{"X-Team", "parley"}};
  s.model = "m1";
  s.api_key = "sk-secret-key";
  return s;
}

const std::vector<json> input{json{{"type", "message"},
                                   {"role", "user"},
                                   {"content", json::array({{{"type", "input_text"}, {"text", "hi"}}})}}};

std::string header(const http::request& r, const char* name) {
  auto* v = http::find_header(r.headers, name);
  return v ? *v : std::string{};
}

TEST(ModelRequest, ResponsesGoToResponsesWithTheKeyAndTheProvidersHeaders) {
  auto r = model_request::build(setup_for(model_config::wire_api::responses), input, "thread-1");
  EXPECT_EQ(r.url, "http://127.0.0.1:9/v1/responses?api-version=2025-04-01");
  EXPECT_EQ(header(r, "Authorization"), "Bearer sk-secret-key");
  EXPECT_EQ(header(r, "X-Team"), "parley");
  EXPECT_EQ(header(r, "Accept"), "text/event-stream");
  auto body = json::parse(r.body);
  EXPECT_EQ(body["model"], "m1");
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["prompt_cache_key"], "thread-1");
  ASSERT_EQ(body["input"].size(), 1u);
  EXPECT_EQ(body["input"][0]["role"], "user");
}

TEST(ModelRequest, ChatGoesToChatCompletionsAsMessages) {
  auto r = model_request::build(setup_for(model_config::wire_api::chat), input, "thread-1");
  EXPECT_EQ(r.url.rfind("http://127.0.0.1:9/v1/chat/completions?", 0), 0u) << r.url;
  auto body = json::parse(r.body);
  ASSERT_TRUE(body.contains("messages"));
  EXPECT_FALSE(body.contains("input"));
}

TEST(ModelRequest, NoKeyNoAuthorization) {
  auto s = setup_for(model_config::wire_api::responses);
  s.api_key.clear();
  auto r = model_request::build(s, input, "t");
  EXPECT_EQ(http::find_header(r.headers, "Authorization"), nullptr);
}

TEST(ModelRequest, DeveloperInstructionsLeadTheInput) {
  auto s = setup_for(model_config::wire_api::responses);
  s.developer_instructions = "be brief";
  auto body = json::parse(model_request::build(s, input, "t").body);
  ASSERT_EQ(body["input"].size(), 2u);
  EXPECT_EQ(body["input"][0]["role"], "developer");
}

TEST(ModelRequest, DeveloperInstructionsLeadChatMessagesAfterTheInstructions) {
  auto s = setup_for(model_config::wire_api::chat);
  s.instructions = "You are a coding agent.";
  s.developer_instructions = "be brief";
  auto body = json::parse(model_request::build(s, input, "t").body);
  const auto& messages = body["messages"];
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0]["content"], "You are a coding agent.");
  EXPECT_EQ(messages[1], (json{{"role", "system"}, {"content", "be brief"}}));
  EXPECT_EQ(messages[2]["role"], "user");
}

TEST(ModelRequest, EnvHeadersAreSentOnlyWhenTheVariableIsSet) {
  auto s = setup_for(model_config::wire_api::responses);
  s.provider.env_http_headers = {{"X-Org", "PARLEY_TEST_ORG_HEADER"}};
  ::unsetenv("PARLEY_TEST_ORG_HEADER");
  EXPECT_EQ(header(model_request::build(s, input, "t"), "X-Org"), "");
  ::setenv("PARLEY_TEST_ORG_HEADER", "org-7", 1);
  EXPECT_EQ(header(model_request::build(s, input, "t"), "X-Org"), "org-7");
  ::unsetenv("PARLEY_TEST_ORG_HEADER");
}

TEST(ModelRequest, RetriesRateLimitsAndServerErrorsOnly) {
  for (int s : {408, 409, 429, 500, 502, 503}) EXPECT_TRUE(model_request::retryable_status(s)) << s;
  for (int s : {400, 401, 403, 404, 422}) EXPECT_FALSE(model_request::retryable_status(s)) << s;
}

TEST(ModelRequest, BackoffGrowsIsCappedAndHonoursRetryAfter) {
  using std::chrono::milliseconds;
  EXPECT_EQ(model_request::backoff(1, {}, 0.5), milliseconds(200));
  EXPECT_EQ(model_request::backoff(2, {}, 0.5), milliseconds(400));
  EXPECT_EQ(model_request::backoff(3, {}, 0.0), milliseconds(720));  // -10% jitter
  EXPECT_EQ(model_request::backoff(30, {}, 0.5), milliseconds(30'000));
  EXPECT_EQ(model_request::backoff(1, {{"Retry-After", "2"}}, 0.5), milliseconds(2000));
  EXPECT_EQ(model_request::backoff(1, {{"retry-after", "0.25"}}, 0.5), milliseconds(250));
  EXPECT_EQ(model_request::backoff(1, {{"retry-after", "soon"}}, 0.5), milliseconds(200));
}

TEST(ModelRequest, StatusMessagesUseTheProvidersOwnWords) {
  EXPECT_EQ(model_request::status_message(429, R"({"error":{"message":"Rate limit reached"}})"),
            "HTTP 429: Rate limit reached");
  EXPECT_EQ(model_request::status_message(500, "upstream exploded"), "HTTP 500: upstream exploded");
  EXPECT_EQ(model_request::status_message(502, ""), "HTTP 502");
}

}  // namespace
}  // namespace parley
