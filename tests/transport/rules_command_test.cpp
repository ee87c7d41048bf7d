// `parley rules check`, run as the real binary: what the rules in a home
// decide about a command or a file change, on stdout only.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

/// Runs `parley rules <args>` with `env` ("NAME=value ..." or "") in front.
outcome run_rules(const std::string& dir, const std::vector<std::string>& args,
                  const std::string& env = "") {
  auto err_path = dir + "/stderr.txt";
  std::string command = env + " " + shell_quoted(parley_binary()) + " rules";
  for (auto& a : args) command += " " + shell_quoted(a);
  command += " 2>" + shell_quoted(err_path);
  outcome o;
  FILE* p = ::popen(command.c_str(), "r");
  char buf[512];
  while (auto n = std::fread(buf, 1, sizeof buf, p)) o.out.append(buf, n);
  int status = ::pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err{err_path};
  std::ostringstream s;
  s << err.rdbuf();
  o.err = s.str();
  return o;
}

/// A temp dir with HOME/rules/default.rules holding `rules`; returns the dir
/// (the home is dir + "/home").
std::string home_with(const std::string& name, const std::string& rules) {
  auto dir = make_temp_dir(name);
  std::filesystem::create_directories(dir + "/home/rules");
  std::ofstream{dir + "/home/rules/default.rules"} << rules;
  return dir;
}

const char* const sample_rules = R"(# parley rules
# commands
prefix_rule(pattern = ["git", "push"], decision = "forbidden", justification = "pushes need a human")
prefix_rule(pattern = ["git", ["status", "log"]], decision = "allow")
path_rule(glob = "**/.env", decision = "deny", justification = "secrets")
path_rule(glob = "src/**", decision = "allow")
)";

TEST(RulesCommand, a_forbidden_command_is_denied_with_its_rule_and_reason) {
  auto dir = home_with("rules_cmd_deny", sample_rules);
  auto o = run_rules(dir, {"check", "--home=" + dir + "/home", "--", "git", "push", "origin"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "deny: prefix_rule(pattern=[\"git\",\"push\"], decision=\"forbidden\") at " + dir
                       + "/home/rules/default.rules:3 matches \"git push origin\": pushes need a "
                         "human\n");
  EXPECT_EQ(o.err, "");
}

TEST(RulesCommand, an_allowed_command_names_the_allowing_rule) {
  auto dir = home_with("rules_cmd_allow", sample_rules);
  auto o = run_rules(dir, {"check", "--home=" + dir + "/home", "--", "git", "log", "-3"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "allow: prefix_rule(pattern=[\"git\",[\"status\",\"log\"]], decision=\"allow\") at "
                       + dir + "/home/rules/default.rules:4 matches \"git log -3\"\n");
}

TEST(RulesCommand, a_command_no_rule_matches_is_left_to_the_next_stages) {
  auto dir = home_with("rules_cmd_none", sample_rules);
  auto o = run_rules(dir, {"check", "--home=" + dir + "/home", "--", "ls", "-la"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "no rule matches \"ls -la\": the approval policy and the next stages decide\n");
  // A home without rules decides nothing either.
  auto empty = make_temp_dir("rules_cmd_no_dir");
  auto bare = run_rules(empty, {"check", "--home=" + empty, "--", "git", "push"});
  EXPECT_EQ(bare.code, 0) << bare.err;
  EXPECT_EQ(bare.out.rfind("no rule matches \"git push\"", 0), 0u) << bare.out;
}

TEST(RulesCommand, json_prints_one_object) {
  auto dir = home_with("rules_cmd_json", sample_rules);
  auto o = run_rules(dir, {"check", "--json", "--home=" + dir + "/home", "--", "git", "push"});
  EXPECT_EQ(o.code, 0) << o.err;
  ASSERT_EQ(o.out.back(), '\n');
  EXPECT_EQ(o.out.find('\n'), o.out.size() - 1) << "one line: " << o.out;
  auto j = json::parse(o.out);
  EXPECT_EQ(j["decision"], "deny");
  EXPECT_EQ(j["rule"], R"(prefix_rule(pattern=["git","push"], decision="forbidden"))");
  EXPECT_EQ(j["source"], dir + "/home/rules/default.rules:3");
  EXPECT_NE(j["explanation"].get<std::string>().find("pushes need a human"), std::string::npos);
  EXPECT_EQ(j.size(), 4u);

  auto none = run_rules(dir, {"check", "--home=" + dir + "/home", "--json", "--", "ls"});
  EXPECT_EQ(none.code, 0) << none.err;
  auto n = json::parse(none.out);
  EXPECT_TRUE(n["decision"].is_null());
  EXPECT_TRUE(n["rule"].is_null());
  EXPECT_TRUE(n["source"].is_null());
  EXPECT_EQ(n["explanation"], "no rule matches \"ls\": the approval policy and the next stages decide");
}

TEST(RulesCommand, paths_are_checked_against_path_rules_relative_to_cwd) {
  auto dir = home_with("rules_cmd_path", sample_rules);
  auto home = "--home=" + dir + "/home";
  auto cwd = "--cwd=" + dir + "/work";
  auto secret = run_rules(dir, {"check", home, "--path=src/../.env", cwd});
  EXPECT_EQ(secret.code, 0) << secret.err;
  EXPECT_EQ(secret.out, "deny: path_rule(glob=\"**/.env\", decision=\"forbidden\") at " + dir
                            + "/home/rules/default.rules:5 matches \"" + dir
                            + "/work/.env\": secrets\n");
  auto source = run_rules(dir, {"check", home, cwd, "--path=src/a.cpp"});
  EXPECT_EQ(source.out.rfind("allow: path_rule(glob=\"src/**\"", 0), 0u) << source.out;
  auto outside = run_rules(dir, {"check", home, cwd, "--path=/elsewhere/src/a.cpp"});
  EXPECT_EQ(outside.out, "no rule matches \"/elsewhere/src/a.cpp\": the approval policy and the "
                         "next stages decide\n");
  // Several paths: one the rules don't cover makes the change ask.
  auto mixed = run_rules(dir, {"check", home, cwd, "--json", "--path=src/a.cpp", "--path=README"});
  EXPECT_EQ(json::parse(mixed.out)["decision"], "ask") << mixed.out;
  // Without --cwd, relative paths are taken from the current directory.
  auto here = run_rules(dir, {"check", home, "--path=.env"});
  EXPECT_EQ(here.out.rfind("deny: ", 0), 0u) << here.out;
}

TEST(RulesCommand, the_home_defaults_to_PARLEY_HOME) {
  auto dir = home_with("rules_cmd_env_home", sample_rules);
  auto o = run_rules(dir, {"check", "--", "git", "push"}, "PARLEY_HOME=" + shell_quoted(dir + "/home"));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("deny: ", 0), 0u) << o.out;
}

TEST(RulesCommand, rules_that_do_not_load_exit_1_with_file_line_and_column) {
  auto dir = home_with("rules_cmd_bad", "prefix_rule(pattern=[\"ls\"])\nprefix_rule(pattern=[\"git\"], colour=\"red\")\n");
  auto o = run_rules(dir, {"check", "--home=" + dir + "/home", "--", "git", "push"});
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, "parley: " + dir
                       + "/home/rules/default.rules:2:30: unknown keyword `colour` for prefix_rule\n");
}

TEST(RulesCommand, usage_errors_exit_2_and_print_nothing_on_stdout) {
  auto dir = home_with("rules_cmd_usage", sample_rules);
  auto home = "--home=" + dir + "/home";
  std::vector<std::vector<std::string>> bad{
      {},
      {"verify"},
      {"check", home},
      {"check", home, "--"},
      {"check", home, "--path=a", "--", "ls"},
      {"check", home, "--cwd=/", "--", "ls"},
      {"check", home, "--bogus", "--", "ls"},
      {"check", home, "--path="},
  };
  for (auto& args : bad) {
    auto o = run_rules(dir, args);
    std::string shown;
    for (auto& a : args) shown += a + " ";
    EXPECT_EQ(o.code, 2) << shown;
    EXPECT_EQ(o.out, "") << shown;
    EXPECT_NE(o.err.find("usage:"), std::string::npos) << shown << o.err;
  }
}

}  // namespace
}  // namespace parley::test
