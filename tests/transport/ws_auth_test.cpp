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
  return auth_config{auth_config::mode::signed_bearer_token, std::move(secret)};
}

TEST(WsAuth, without_a_mode_everyone_may_connect) {
  EXPECT_FALSE(refusal(auth_config{}, "", now));
}

TEST(WsAuth, a_capability_token_must_match_exactly) {
  auth_config cfg{auth_config::mode::capability_token, "tok-123"};
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
  EXPECT_EQ(cfg->secret, "tok-123");  // without its newline
  std::ofstream(path, std::ios::trunc) << "\n";
  EXPECT_FALSE(load_auth("capability-token", path.string(), "", error));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace parley::ws
