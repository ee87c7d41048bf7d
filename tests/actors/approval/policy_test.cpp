#include "actors/approval/policy.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

using protocol::approval_policy;

TEST(policy, never_runs_on_request_asks) {
  EXPECT_EQ(evaluate(approval_policy::never(), "rm -rf /tmp/x"), policy_verdict::run);
  EXPECT_EQ(evaluate(approval_policy::on_request(), "ls"), policy_verdict::ask);
}

TEST(policy, leaving_the_sandbox_is_asked_wherever_anyone_is_asked_and_declined_under_never) {
  EXPECT_EQ(evaluate(approval_policy::never(), "touch /opt/x", true), policy_verdict::decline);
  EXPECT_EQ(evaluate(approval_policy::on_request(), "touch /opt/x", true), policy_verdict::ask);
  // A known read-only command still asks when it wants out of the sandbox.
  EXPECT_EQ(evaluate(approval_policy::untrusted(), "ls", true), policy_verdict::ask);
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

TEST(policy, granular_asks_or_declines) {
  approval_policy g;
  g.value = approval_policy::kind::granular;
  EXPECT_EQ(evaluate(g, "touch x"), policy_verdict::decline);
  g.granular.sandbox_approval = true;
  EXPECT_EQ(evaluate(g, "touch x"), policy_verdict::ask);
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
