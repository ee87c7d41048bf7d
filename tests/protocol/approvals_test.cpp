#include "protocol/approvals.hpp"

#include <gtest/gtest.h>

namespace parley::protocol {
namespace {

TEST(approvals, every_decision_value_round_trips) {
  std::vector<json> values = {
      "accept", "acceptForSession", "decline", "cancel",
      json{{"acceptWithExecpolicyAmendment", {{"execpolicy_amendment", {"git", "pull"}}}}},
      json{{"applyNetworkPolicyAmendment",
            {{"network_policy_amendment", {{"host", "example.com"}, {"action", "allow"}}}}}},
  };
  for (auto& v : values) {
    auto d = decode<approval_decision>(v);
    EXPECT_EQ(json(d), v);
  }
}

TEST(approvals, only_explicit_accepts_allow_running) {
  EXPECT_TRUE(approval_decision::accept().allows_run());
  EXPECT_TRUE(approval_decision::accept_for_session().allows_run());
  EXPECT_FALSE(approval_decision::decline().allows_run());
  EXPECT_FALSE(approval_decision::cancel().allows_run());
  auto amend = decode<approval_decision>(
      json{{"acceptWithExecpolicyAmendment", {{"execpolicy_amendment", {"ls"}}}}});
  EXPECT_TRUE(amend.allows_run());
  auto deny = decode<approval_decision>(json{{"applyNetworkPolicyAmendment",
                                              {{"network_policy_amendment",
                                                {{"host", "h"}, {"action", "deny"}}}}}});
  EXPECT_FALSE(deny.allows_run());
  EXPECT_FALSE(approval_decision{}.allows_run()) << "the default must fail closed";
}

TEST(approvals, malformed_decisions_are_errors) {
  for (auto bad : {json("bogus"), json(1), json::object(), json{{"accept", true}},
                   json{{"acceptWithExecpolicyAmendment", "x"}},
                   json{{"applyNetworkPolicyAmendment",
                         {{"network_policy_amendment", {{"host", "h"}, {"action", "maybe"}}}}}}}) {
    EXPECT_THROW(decode<approval_decision>(bad), decode_error) << bad;
  }
  EXPECT_THROW(decode_approval_result(json::object()), decode_error);
  EXPECT_THROW(decode_approval_result(json("accept")), decode_error);
  EXPECT_EQ(decode_approval_result(json{{"decision", "cancel"}}).value,
            approval_decision::kind::cancel);
}

TEST(approvals, request_params_match_the_schema_shape) {
  command_approval_params p;
  p.thread_id = "t";
  p.turn_id = "u";
  p.item_id = "call_1";
  p.started_at_ms = 42;
  p.command = "/bin/sh -c 'make test'";
  p.cwd = "/w";
  p.command_actions = {command_action{command_action::kind::unknown, "make test", {}, {}, {}}};
  p.proposed_execpolicy_amendment = {"make", "test"};
  auto j = json(p);
  for (auto key : {"threadId", "turnId", "itemId", "startedAtMs"}) EXPECT_TRUE(j.contains(key));
  EXPECT_EQ(j["kind"], "command");
  EXPECT_EQ(j["proposedExecpolicyAmendment"], json::array({"make", "test"}));
  auto back = decode<command_approval_params>(j);
  EXPECT_EQ(json(back), j);
}

}  // namespace
}  // namespace parley::protocol
