#include "actors/approval/policy.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

using protocol::approval_policy;

constexpr auto confined = command_place::confined;
constexpr auto unconfined_host = command_place::unconfined_host;
constexpr auto full_access = command_place::full_access;
constexpr auto run = policy_verdict::run;
constexpr auto ask = policy_verdict::ask;
constexpr auto decline = policy_verdict::decline;

approval_policy granular(bool sandbox_approval) {
  approval_policy g;
  g.value = approval_policy::kind::granular;
  g.granular.sandbox_approval = sandbox_approval;
  return g;
}

TEST(policy, approvals_ask_only_to_leave_the_sandbox) {
  // A confined command runs unasked under every policy but untrusted; an
  // escalation asks wherever anyone is asked.
  for (const auto& p : {approval_policy::on_request(), granular(true)}) {
    EXPECT_EQ(evaluate(p, "touch x"), run);
    EXPECT_EQ(evaluate(p, "rm -rf /tmp/x", false, confined), run);
    EXPECT_EQ(evaluate(p, "touch /opt/x", true, confined), ask);
  }
  EXPECT_EQ(evaluate(approval_policy::never(), "rm -rf /tmp/x"), run);
  EXPECT_EQ(evaluate(approval_policy::never(), "touch /opt/x", true), decline);
  // granular without sandbox_approval: Codex's auto-reject, nobody asked.
  EXPECT_EQ(evaluate(granular(false), "touch x"), run);
  EXPECT_EQ(evaluate(granular(false), "touch /opt/x", true), decline);
  // untrusted: asks except known read-only commands, which stay confined.
  EXPECT_EQ(evaluate(approval_policy::untrusted(), "ls"), run);
  EXPECT_EQ(evaluate(approval_policy::untrusted(), "touch x"), ask);
  EXPECT_EQ(evaluate(approval_policy::untrusted(), "ls", true), ask);
}

TEST(policy, a_host_that_cannot_confine_makes_every_command_an_escalation) {
  // Fail closed: what would run unconfined is asked (or declined) as if the
  // model had asked to leave the sandbox.
  for (bool escalated : {false, true}) {
    EXPECT_EQ(evaluate(approval_policy::on_request(), "touch x", escalated, unconfined_host), ask);
    EXPECT_EQ(evaluate(granular(true), "touch x", escalated, unconfined_host), ask);
    EXPECT_EQ(evaluate(granular(false), "touch x", escalated, unconfined_host), decline);
    EXPECT_EQ(evaluate(approval_policy::never(), "touch x", escalated, unconfined_host), decline);
    EXPECT_EQ(evaluate(approval_policy::untrusted(), "touch x", escalated, unconfined_host), ask);
    EXPECT_EQ(evaluate(approval_policy::untrusted(), "ls", escalated, unconfined_host), ask);
  }
}

TEST(policy, with_full_access_there_is_no_sandbox_to_leave) {
  // As Codex: on-request and granular "just run" commands in an
  // unrestricted environment, escalated or not.
  for (bool escalated : {false, true}) {
    EXPECT_EQ(evaluate(approval_policy::on_request(), "touch x", escalated, full_access), run);
    EXPECT_EQ(evaluate(granular(true), "touch x", escalated, full_access), run);
    EXPECT_EQ(evaluate(granular(false), "touch x", escalated, full_access), run);
    EXPECT_EQ(evaluate(approval_policy::untrusted(), "touch x", escalated, full_access), ask);
  }
  EXPECT_EQ(evaluate(approval_policy::never(), "touch x", false, full_access), run);
  EXPECT_EQ(evaluate(approval_policy::never(), "touch x", true, full_access), decline);
  EXPECT_EQ(evaluate(approval_policy::untrusted(), "ls", false, full_access), run);
  EXPECT_EQ(evaluate(approval_policy::untrusted(), "ls", true, full_access), ask);
}

TEST(policy, place_of_a_threads_commands) {
  using kind = protocol::sandbox_policy::kind;
  protocol::sandbox_policy s;
  for (auto k : {kind::read_only, kind::workspace_write}) {
    s.type = k;
    EXPECT_EQ(place_of(s, false), confined);
    EXPECT_EQ(place_of(s, true), unconfined_host);
  }
  for (auto k : {kind::danger_full_access, kind::external_sandbox}) {
    s.type = k;
    EXPECT_EQ(place_of(s, false), full_access);
    EXPECT_EQ(place_of(s, true), full_access);
  }
}

TEST(policy, untrusted_skips_only_simple_read_only_commands) {
  auto p = approval_policy::untrusted();
  EXPECT_EQ(evaluate(p, "ls -la"), policy_verdict::run);
  EXPECT_EQ(evaluate(p, "cat README.md"), policy_verdict::run);
  EXPECT_EQ(evaluate(p, "touch x"), policy_verdict::ask);
  EXPECT_EQ(evaluate(p, "ls; rm x"), policy_verdict::ask);
  EXPECT_EQ(evaluate(p, "cat x > y"), policy_verdict::ask);
  EXPECT_EQ(evaluate(p, "echo $(rm x)"), policy_verdict::ask);
  EXPECT_EQ(evaluate(p, "ls | sh"), policy_verdict::ask);
  EXPECT_EQ(evaluate(p, "find . -delete"), policy_verdict::ask);
}

TEST(policy, session_grants_cover_exact_commands_and_prefixes) {
  session_grants g;
  g.commands.insert("make test");
  g.prefixes.push_back({"git", "pull"});
  EXPECT_TRUE(g.covers("make test"));
  EXPECT_FALSE(g.covers("make install"));
  EXPECT_TRUE(g.covers("git pull --rebase"));
  EXPECT_FALSE(g.covers("git push"));
  EXPECT_FALSE(g.covers("git pull; rm -rf x")) << "a prefix grant never covers shell syntax";
}

TEST(policy, session_grants_cover_files_only_when_every_file_was_accepted) {
  session_grants g;
  EXPECT_FALSE(g.covers_paths({"/w/a.txt"}));
  g.paths.insert("/w/a.txt");
  g.paths.insert("/w/b.txt");
  EXPECT_TRUE(g.covers_paths({"/w/a.txt"}));
  EXPECT_TRUE(g.covers_paths({"/w/a.txt", "/w/b.txt"}));
  EXPECT_FALSE(g.covers_paths({"/w/a.txt", "/w/c.txt"}));
  EXPECT_FALSE(g.covers_paths({}));
}

TEST(policy, file_changes_run_under_never_and_ask_otherwise) {
  EXPECT_EQ(evaluate_file_change(approval_policy::never()), policy_verdict::run);
  EXPECT_EQ(evaluate_file_change(approval_policy::on_request()), policy_verdict::ask);
  EXPECT_EQ(evaluate_file_change(approval_policy::untrusted()), policy_verdict::ask);
  approval_policy g;
  g.value = approval_policy::kind::granular;
  EXPECT_EQ(evaluate_file_change(g), policy_verdict::decline);
  g.granular.sandbox_approval = true;
  EXPECT_EQ(evaluate_file_change(g), policy_verdict::ask);
}

TEST(policy, a_refused_command_is_offered_outside_under_untrusted_and_granular_with_sandbox_approval) {
  EXPECT_TRUE(asks_to_retry_outside(approval_policy::untrusted()));
  EXPECT_FALSE(asks_to_retry_outside(approval_policy::on_request()))
      << "on-request: the model asks to escalate; a refusal is not asked about";
  EXPECT_FALSE(asks_to_retry_outside(approval_policy::never()));
  approval_policy g;
  g.value = approval_policy::kind::granular;
  EXPECT_FALSE(asks_to_retry_outside(g));
  g.granular.sandbox_approval = true;
  EXPECT_TRUE(asks_to_retry_outside(g));
}

TEST(policy, splits_simple_commands) {
  using words = std::vector<std::string>;
  EXPECT_EQ(split_simple_command("git commit -m 'a b'"), (words{"git", "commit", "-m", "a b"}));
  EXPECT_EQ(split_simple_command(R"(echo "x y" z\ w)"), (words{"echo", "x y", "z w"}));
  EXPECT_FALSE(split_simple_command("a | b"));
  EXPECT_FALSE(split_simple_command("echo \"$HOME\""));
  EXPECT_FALSE(split_simple_command("echo 'open"));
  EXPECT_FALSE(split_simple_command("   "));
}

TEST(policy, splits_command_lists_into_simple_commands) {
  using list = std::vector<std::vector<std::string>>;
  EXPECT_EQ(split_command_list("git status && git push origin; ls | wc -l"),
            (list{{"git", "status"}, {"git", "push", "origin"}, {"ls"}, {"wc", "-l"}}));
  EXPECT_EQ(split_command_list("echo 'a; b' || true"), (list{{"echo", "a; b"}, {"true"}}));
  EXPECT_EQ(split_command_list("git push"), (list{{"git", "push"}}));
  EXPECT_FALSE(split_command_list("echo $(git push)"));
  EXPECT_FALSE(split_command_list("ls > out; rm x"));
  EXPECT_FALSE(split_command_list("a &&"));
  EXPECT_FALSE(split_command_list("sleep 1 & git push"));
}

TEST(policy, describes_commands) {
  using kind = protocol::command_action::kind;
  auto read = describe_command("cat src/main.cpp");
  EXPECT_EQ(read[0].type, kind::read);
  EXPECT_EQ(read[0].name, "main.cpp");
  EXPECT_EQ(describe_command("ls src")[0].type, kind::list_files);
  auto search = describe_command("grep -n TODO src");
  EXPECT_EQ(search[0].type, kind::search);
  EXPECT_EQ(search[0].query, "TODO");
  EXPECT_EQ(describe_command("make test")[0].type, kind::unknown);
  EXPECT_EQ(display_command("echo 'hi'"), R"(/bin/sh -c 'echo '\''hi'\''')");
}

}  // namespace
}  // namespace parley
