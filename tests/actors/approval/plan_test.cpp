// The approval plan: one pure decision per action, from the policy's
// verdict, the rules snapshot, the session grants and the hooks.

#include "actors/approval/plan.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

using route = approval_plan::route;

approval_ask command(const std::string& raw) {
  approval_ask ask;
  ask.what = hooks::action_kind::command;
  ask.raw_command = raw;
  ask.cwd = "/w";
  return ask;
}

approval_ask file_change(const std::string& path) {
  approval_ask ask;
  ask.what = hooks::action_kind::file_change;
  ask.cwd = "/w";
  protocol::file_update_change c;
  c.path = path;
  ask.changes.push_back(c);
  return ask;
}

const auto book = rules::rule_set::parse(R"(
prefix_rule(pattern = ["rm"], decision = "forbidden", justification = "no deleting")
prefix_rule(pattern = ["ls"], decision = "allow")
prefix_rule(pattern = ["git", "push"], decision = "prompt")
path_rule(glob = "/w/secret/**", decision = "deny")
)",
                                         "plan_test");

const hook_set no_hooks{};

TEST(ApprovalPlan, policy_decline_refuses_without_reading_rules) {
  auto plan = plan_approval(policy_verdict::decline, command("rm -rf x"), &book, {}, no_hooks);
  EXPECT_EQ(plan.what, route::refuse);
  EXPECT_EQ(plan.refusal, "declined by policy");
  EXPECT_FALSE(plan.rule);
}

TEST(ApprovalPlan, run_unless_a_rule_forbids_even_within_a_list) {
  EXPECT_EQ(plan_approval(policy_verdict::run, command("ls"), &book, {}, no_hooks).what,
            route::run);
  EXPECT_EQ(plan_approval(policy_verdict::run, command("ls"), nullptr, {}, no_hooks).what,
            route::run);
  auto plan = plan_approval(policy_verdict::run, command("ls && rm x"), &book, {}, no_hooks);
  EXPECT_EQ(plan.what, route::refuse);
  EXPECT_EQ(plan.refusal, "declined: " + plan.rule->explanation);
  auto file = plan_approval(policy_verdict::run, file_change("/w/secret/k"), &book, {}, no_hooks);
  EXPECT_EQ(file.what, route::refuse);
}

TEST(ApprovalPlan, rules_and_grants_decide_at_once_without_waiting) {
  auto denied = plan_approval(policy_verdict::ask, command("rm x"), &book, {}, no_hooks);
  EXPECT_EQ(denied.what, route::decide);
  ASSERT_TRUE(denied.rule);
  EXPECT_EQ(denied.rule->verdict, rules::decision::deny);
  EXPECT_FALSE(denied.waits());

  auto allowed = plan_approval(policy_verdict::ask, command("ls -l"), &book, {}, no_hooks);
  EXPECT_FALSE(allowed.waits());

  session_grants grants;
  grants.commands.insert("make test");
  auto granted_plan
      = plan_approval(policy_verdict::ask, command("make test"), &book, grants, no_hooks);
  EXPECT_TRUE(granted_plan.granted);
  EXPECT_FALSE(granted_plan.waits());
}

TEST(ApprovalPlan, the_client_or_a_hook_means_waiting) {
  EXPECT_TRUE(plan_approval(policy_verdict::ask, command("make"), &book, {}, no_hooks).waits());
  // "prompt" keeps the client in the loop even when a grant covers it.
  session_grants grants;
  grants.commands.insert("git push");
  EXPECT_TRUE(
      plan_approval(policy_verdict::ask, command("git push"), &book, grants, no_hooks).waits());
  // An allowing rule still waits for a hook that reviews commands...
  std::vector<hooks::external_hook_spec> programs(1);
  programs[0].name = "files-only";
  programs[0].on = {hooks::action_kind::file_change};
  hook_set file_hooks{nullptr, &programs};
  EXPECT_FALSE(plan_approval(policy_verdict::ask, command("ls"), &book, {}, file_hooks).waits());
  // ... but not for one that reviews only file changes.
  EXPECT_TRUE(
      plan_approval(policy_verdict::ask, file_change("/w/a"), &book, {}, file_hooks).hooks_review);
}

TEST(ApprovalPlan, the_plan_keeps_the_rules_it_was_made_with) {
  auto plan = plan_approval(policy_verdict::ask, command("ls"), &book, {}, no_hooks);
  auto stricter
      = rules::rule_set::parse(R"(prefix_rule(pattern = ["ls"], decision = "forbidden"))", "later");
  // A rule book that changes after planning changes nothing in the plan.
  ASSERT_TRUE(plan.rule);
  EXPECT_EQ(plan.rule->verdict, rules::decision::allow);
  EXPECT_EQ(check_rules(stricter, command("ls"))->verdict, rules::decision::deny);
}

}  // namespace
}  // namespace parley
