// request_text writes the command approval request's params without a DOM:
// byte for byte what nlohmann writes for them with the actionDigest the
// request adds (transport/approval_requests.cpp's fallback), or nothing.

#include "protocol/request_text.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "protocol/json_codec.hpp"

namespace parley::protocol {
namespace request_text_tests {

std::vector<std::string> strings() {
  std::vector<std::string> out{"", "true", "/bin/sh -c 'echo \"hi\" \\ there'", "\t\n\r\b\f\x01\x7f",
                               "\xe2\x82\xac \xf0\x9f\x98\x80", "\xed\xa0\x80", "\xff", "\xc3"};
  for (int c = 0; c < 256; c += 5) out.push_back("x" + std::string(1, static_cast<char>(c)));
  std::mt19937 rng(23);  // seeded: the same strings every run
  for (int k = 0; k < 300; ++k) {
    std::string s(rng() % 9, '\0');
    for (auto& ch : s) ch = static_cast<char>(rng() % 256);
    out.push_back(std::move(s));
  }
  return out;
}

/// nlohmann's text of the request's params: the reference.
std::string reference(const command_approval_params& p, const std::string& digest) {
  json j = p;
  j["actionDigest"] = digest;
  return dump_line(j);
}

std::vector<command_approval_params> params_with(const std::string& s) {
  std::vector<command_approval_params> out;
  command_approval_params p;
  p.thread_id = "019b0000-0000-7000-8000-000000000000";
  p.turn_id = s;
  p.item_id = "call_" + s;
  out.push_back(p);  // every optional absent, no actions, no amendment
  p.started_at_ms = 1795868059213;
  p.command = "/bin/sh -c '" + s + "'";
  p.cwd = s;
  p.reason = s;
  using k = command_action::kind;
  p.command_actions = {{k::unknown, s, std::nullopt, std::nullopt, std::nullopt}};
  p.proposed_execpolicy_amendment = {s};
  out.push_back(p);
  p.started_at_ms = INT64_MIN;
  p.command_actions = {{k::read, s, s, s, std::nullopt},
                       {k::list_files, "ls", std::nullopt, std::nullopt, std::nullopt},
                       {k::search, s, std::nullopt, s, s}};
  p.proposed_execpolicy_amendment = {"git", s, "status"};
  out.push_back(p);
  return out;
}

TEST(request_text, command_approvals_match_nlohmann) {
  size_t written = 0;
  for (const auto& s : strings())
    for (const auto& p : params_with(s))
      for (const auto& digest : {std::string{"sha256:d231f39677"}, s}) {
        std::string out;
        if (!append_command_approval(out, p, digest)) continue;  // nlohmann writes it
        ++written;
        EXPECT_EQ(out, reference(p, digest)) << reference(p, digest);
      }
  EXPECT_GT(written, 100u);  // the check above is not vacuous
}

TEST(request_text, only_text_that_is_not_utf8_is_left_to_nlohmann) {
  for (const auto& p : params_with("plain \"text\"\n")) {
    std::string out;
    EXPECT_TRUE(append_command_approval(out, p, "sha256:00"));
  }
  for (const auto& p : params_with("\xff")) {
    std::string out;
    EXPECT_FALSE(append_command_approval(out, p, "sha256:00"));
  }
}

}  // namespace request_text_tests
}  // namespace parley::protocol
