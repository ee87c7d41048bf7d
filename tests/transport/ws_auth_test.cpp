// Who may open a WebSocket session: capability tokens and HS256-signed bearer
// tokens (tokens made with Python's hmac module, secret "s3cret").

#include "transport/ws_auth.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace parley::ws {
namespace {

constexpr int64_t now = 1'800'000'000;

auth_config signed_by(std::string secret) {
  auth_config cfg;
  cfg.what = auth_config::mode::signed_bearer_token;
  cfg.secret = std::move(secret);
  return cfg;
}

TEST(WsAuth, without_a_mode_everyone_may_connect) {
  EXPECT_FALSE(refusal(auth_config{}, "", now));
}

TEST(WsAuth, a_capability_token_must_match_exactly) {
  auth_config cfg;
  cfg.what = auth_config::mode::capability_token;
  cfg.secret = "tok-123";
  EXPECT_FALSE(refusal(cfg, "Bearer tok-123", now));
  EXPECT_TRUE(refusal(cfg, "Bearer tok-12", now));
  EXPECT_TRUE(refusal(cfg, "Bearer tok-1234", now));
  EXPECT_TRUE(refusal(cfg, "tok-123", now));  // not a bearer header
  EXPECT_TRUE(refusal(cfg, "", now));
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
}

TEST(WsAuth, a_signed_token_needs_the_secret_hs256_and_a_future_expiry) {
  auto cfg = signed_by("s3cret");
  const std::string valid
      = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAieCIsICJleHAiOiA0MTAyNDQ0ODAwfQ."
        "5XgDvndKLxhq41II6QhSo_zax95ZGq4vRIBLBwwSfT8";
  EXPECT_FALSE(refusal(cfg, "Bearer " + valid, now));
  EXPECT_TRUE(refusal(signed_by("other"), "Bearer " + valid, now));
  EXPECT_EQ(
      *refusal(cfg,
               "Bearer eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAieCIsICJleHAiOiAxMD"
               "AwfQ.Iuu_9oyLF2B2uSsD62Vv-r615P1smBFeKkbxkBS5Q00",
               now),
      "the token has expired");
  EXPECT_EQ(
      *refusal(cfg,
               "Bearer eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAieCJ9.WB86JWxJd8Fp4"
               "2ViCRCWqwUBqvlirTyn1Q3mx78eQ0g",
               now),
      "the token has no expiry");
  EXPECT_EQ(
      *refusal(cfg,
               "Bearer eyJhbGciOiAibm9uZSIsICJ0eXAiOiAiSldUIn0.eyJleHAiOiA0MTAyNDQ0ODAwfQ.YH5Y"
               "lQtoXQzXZhSFXCM2LGoQrJ5feHjTpFrn_ayjmE0",
               now),
      "the token is not signed with HS256");
  EXPECT_EQ(
      *refusal(cfg,
               "Bearer eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJleHAiOiA0MTAyNDQ0ODAwLCAibm"
               "JmIjogNDAwMDAwMDAwMH0.neOLXQ3L8HnWtSVATQxekReNuNLq6-C_V15v-ZwkYzk",
               now),
      "the token is not valid yet");
  // A claim changed after signing.
  auto tampered = valid;
  tampered[valid.find('.') + 3] ^= 1;
  EXPECT_TRUE(refusal(cfg, "Bearer " + tampered, now));
  EXPECT_TRUE(refusal(cfg, "Bearer not.a.jwt!", now));
  EXPECT_TRUE(refusal(cfg, "Bearer onlyonepart", now));
}

TEST(WsAuth, settings_that_cannot_check_anything_are_errors) {
  std::string error;
  EXPECT_TRUE(load_auth("", "", "", error));
  EXPECT_FALSE(load_auth("capability-token", "", "", error));
  EXPECT_NE(error.find("--ws-token-file"), std::string::npos);
  EXPECT_FALSE(load_auth("", "/some/file", "", error));
  EXPECT_FALSE(load_auth("signed-bearer-token", "", "/nonexistent/secret", error));
  auto path
      = std::filesystem::temp_directory_path() / ("parley-token-" + std::to_string(::getpid()));
  std::ofstream(path) << "tok-123\n";
  auto cfg = load_auth("capability-token", path.string(), "", error);
  ASSERT_TRUE(cfg) << error;
  ASSERT_EQ(cfg->tokens.size(), 1u);
  EXPECT_EQ(cfg->tokens[0].token, "tok-123");  // without its newline
  EXPECT_EQ(cfg->tokens[0].who.tenant, "default");  // the old format: the default tenant
  std::ofstream(path, std::ios::trunc) << "\n";
  EXPECT_FALSE(load_auth("capability-token", path.string(), "", error));
  std::filesystem::remove(path);
}

// -- tenants (issue 22) --------------------------------------------------------

const std::string acme_alice
    = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAiYWxpY2UiLCAidGVuYW50IjogImF"
      "jbWUiLCAiZXhwIjogNDEwMjQ0NDgwMH0.mWf-2-m415QI2aFdkBwA8y7QIPyo0g6R0JXHoVATqoE";
const std::string globex_bob_in_org
    = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAiYm9iIiwgIm9yZyI6ICJnbG9iZXg"
      "iLCAiZXhwIjogNDEwMjQ0NDgwMH0.2zTlRkyfco5PzObsQtdIbdJAEhlswqadOBASJsJVvbA";
const std::string operator_root
    = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAicm9vdCIsICJ0ZW5hbnQiOiAib3B"
      "zIiwgInNjb3BlIjogIm9wZW5pZCBwYXJsZXk6b3BlcmF0b3IiLCAiZXhwIjogNDEwMjQ0NDgwMH0.Ml7"
      "qZrfSSanXea7h_gOJpFYSGnlHcfKCMy-MJsmOi-o";
const std::string with_iss_aud
    = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAieCIsICJpc3MiOiAiaHR0cHM6Ly9"
      "pZC5leGFtcGxlIiwgImF1ZCI6ICJwYXJsZXkiLCAiZXhwIjogNDEwMjQ0NDgwMH0.amwWZ6GubifRHPB"
      "c8SqCgy0LL6DXZmWzt8RLbvfVzjk";
const std::string expired_30s_before_now
    = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAieCIsICJleHAiOiAxNzk5OTk5OTc"
      "wfQ._dsdolr5-2tcwJIXzEvBMDW97ytpmHomD8Khc5EJ40M";
const std::string numeric_tenant
    = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAieCIsICJ0ZW5hbnQiOiA1LCAiZXh"
      "wIjogNDEwMjQ0NDgwMH0.QFAgYFvfm6LQUkvkl362Tne397I9PaI6i9WBADEFXjI";

TEST(WsAuth, a_signed_token_names_its_tenant_and_subject) {
  auto cfg = signed_by("s3cret");
  tenant_identity who;
  ASSERT_FALSE(authenticate(cfg, "Bearer " + acme_alice, now, who));
  EXPECT_EQ(who.tenant, "acme");
  EXPECT_EQ(who.subject, "alice");
  EXPECT_FALSE(who.is_operator);
  // Without the claim: the default tenant.
  ASSERT_FALSE(authenticate(cfg, "Bearer " + globex_bob_in_org, now, who));
  EXPECT_EQ(who.tenant, "default");
  cfg.tenant_claim = "org";
  ASSERT_FALSE(authenticate(cfg, "Bearer " + globex_bob_in_org, now, who));
  EXPECT_EQ(who.tenant, "globex");
  EXPECT_EQ(who.subject, "bob");
  EXPECT_EQ(*authenticate(signed_by("s3cret"), "Bearer " + numeric_tenant, now, who),
            "the token's tenant claim is not a name");
}

TEST(WsAuth, the_operator_scope_sees_every_tenant) {
  tenant_identity who;
  ASSERT_FALSE(authenticate(signed_by("s3cret"), "Bearer " + operator_root, now, who));
  EXPECT_TRUE(who.is_operator);
  EXPECT_EQ(who.tenant, "ops");
  EXPECT_TRUE(who.sees("acme"));
  tenant_identity plain;
  plain.tenant = "acme";
  EXPECT_TRUE(plain.sees("acme"));
  EXPECT_FALSE(plain.sees("globex"));
}

TEST(WsAuth, issuer_audience_and_leeway_are_checked_when_configured) {
  auto cfg = signed_by("s3cret");
  EXPECT_FALSE(refusal(cfg, "Bearer " + with_iss_aud, now));
  cfg.issuer = "https://id.example";
  cfg.audience = "parley";
  EXPECT_FALSE(refusal(cfg, "Bearer " + with_iss_aud, now));
  EXPECT_EQ(*refusal(cfg, "Bearer " + acme_alice, now), "the token's issuer is not the one expected");
  cfg.issuer = "https://other.example";
  EXPECT_EQ(*refusal(cfg, "Bearer " + with_iss_aud, now), "the token's issuer is not the one expected");
  cfg.issuer.clear();
  cfg.audience = "someone-else";
  EXPECT_EQ(*refusal(cfg, "Bearer " + with_iss_aud, now), "the token's audience is not this server");
  // Expired 30 s before `now`: refused without leeway, taken with a minute.
  auto lenient = signed_by("s3cret");
  EXPECT_EQ(*refusal(lenient, "Bearer " + expired_30s_before_now, now), "the token has expired");
  lenient.leeway_seconds = 60;
  EXPECT_FALSE(refusal(lenient, "Bearer " + expired_30s_before_now, now));
}

TEST(WsAuth, a_token_file_maps_each_token_to_a_tenant) {
  std::string error;
  auto path = std::filesystem::temp_directory_path()
              / ("parley-tokens-" + std::to_string(::getpid()));
  std::ofstream(path) << "# token tenant [subject] [operator]\n"
                         "tok-a acme alice\n"
                         "\n"
                         "tok-b globex\n"
                         "tok-root ops root operator\n";
  auto cfg = load_auth("capability-token", path.string(), "", error);
  ASSERT_TRUE(cfg) << error;
  tenant_identity who;
  ASSERT_FALSE(authenticate(*cfg, "Bearer tok-a", now, who));
  EXPECT_EQ(who.tenant, "acme");
  EXPECT_EQ(who.subject, "alice");
  ASSERT_FALSE(authenticate(*cfg, "Bearer tok-b", now, who));
  EXPECT_EQ(who.tenant, "globex");
  EXPECT_FALSE(who.is_operator);
  ASSERT_FALSE(authenticate(*cfg, "Bearer tok-root", now, who));
  EXPECT_TRUE(who.is_operator);
  EXPECT_EQ(*authenticate(*cfg, "Bearer tok-c", now, who), "wrong token");
  std::ofstream(path, std::ios::trunc) << "tok-a acme alice extra words\n";
  EXPECT_FALSE(load_auth("capability-token", path.string(), "", error));
  EXPECT_NE(error.find(":1:"), std::string::npos) << error;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace parley::ws
