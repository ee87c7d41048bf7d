// The `parley` command line, run as the real binary: both option forms, help
// per subcommand on stdout, --version, usage errors (exit 2, stderr only) and
// the PARLEY_HOME fallback.

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

/// Runs `parley <args>` with stdin from /dev/null and `env` ("NAME=value" or "") in front.
outcome run_parley(const std::vector<std::string>& args, const std::string& env = "") {
  auto dir = make_temp_dir("command_line_run");
  auto err_path = dir + "/stderr.txt";
  std::string command = env + " " + shell_quoted(parley_binary());
  for (auto& a : args) command += " " + shell_quoted(a);
  command += " </dev/null 2>" + shell_quoted(err_path);
  outcome o;
  FILE* p = ::popen(command.c_str(), "r");
  char buf[512];
  while (auto n = std::fread(buf, 1, sizeof buf, p)) o.out.append(buf, n);
  int status = ::pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = read_file(err_path);
  return o;
}

std::string shown(const std::vector<std::string>& args) {
  std::string s;
  for (auto& a : args) s += a + " ";
  return s;
}

TEST(CommandLine, options_take_a_separate_value_as_well_as_an_equals_sign) {
  auto dir = make_temp_dir("command_line_forms");
  for (auto args : std::vector<std::vector<std::string>>{
           {"app-server", "--store", "memory", "--approval-timeout", "2s", "--log-level", "warn",
            "--home", dir + "/a", "--durability", "item", "--idle-unload", "500ms", "--threads", "2"},
           {"app-server", "--store=memory", "--approval-timeout=2s", "--log-level=warn",
            "--home=" + dir + "/b", "--durability=item", "--idle-unload=500ms", "--threads=2"}}) {
    auto o = run_parley(args);  // stdin at EOF: serves nothing, exits 0
    EXPECT_EQ(o.code, 0) << shown(args) << o.err;
    EXPECT_EQ(o.out, "") << shown(args);
    EXPECT_EQ(o.err, "") << shown(args);
  }
  // --store memory was taken: nothing was written under either home.
  EXPECT_FALSE(file_exists(dir + "/a"));
  EXPECT_FALSE(file_exists(dir + "/b"));
}

TEST(CommandLine, the_space_form_reaches_the_server) {
  auto dir = make_temp_dir("command_line_reach");
  app_server_client c({"--store", "memory", "--approval-timeout", "300ms", "--cwd", dir, "--home=" + dir + "/home"});
  c.initialize();
  auto thread = c.start_thread();
  c.start_turn(thread, "run[escalate]: true");
  auto ask = c.wait_for_method("item/commandExecution/requestApproval");
  // Unanswered, the approval fails closed after 300ms (not the default 10m).
  auto resolved = c.wait_for_method("serverRequest/resolved", 5s);
  EXPECT_EQ(resolved["params"]["requestId"], ask["id"]);
  EXPECT_EQ(c.close_and_wait(), 0);
  EXPECT_FALSE(file_exists(dir + "/home"));
}

TEST(CommandLine, help_for_every_subcommand_goes_to_stdout) {
  std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--help"}, "app-server"},
      {{"-h"}, "rules check"},
      {{"app-server", "--help"}, "--approval-timeout"},
      {{"app-server", "-h"}, "--durability"},
      {{"chat", "--help"}, "--approval-policy"},
      {{"chat", "-h"}, "--store"},
      {{"store", "reindex", "--help"}, "--home"},
      {{"audit", "verify", "-h"}, "FILE"},
      {{"rules", "check", "--help"}, "--path"},
      {{"cluster", "status", "--help"}, "--threads"},
  };
  for (auto& [args, expected] : cases) {
    auto o = run_parley(args);
    EXPECT_EQ(o.code, 0) << shown(args);
    EXPECT_NE(o.out.find(expected), std::string::npos) << shown(args) << o.out;
    EXPECT_EQ(o.err, "") << shown(args);
  }
}

TEST(CommandLine, version_goes_to_stdout) {
  auto o = run_parley({"--version"});
  EXPECT_EQ(o.code, 0);
  EXPECT_EQ(o.out, "parley 0.1.0\n");
  EXPECT_EQ(o.err, "");
}

TEST(CommandLine, usage_errors_exit_2_with_a_message_on_stderr_only) {
  std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{}, "subcommand"},
      {{"frobnicate"}, "frobnicate"},
      {{"app-server", "--bogus"}, "--bogus"},
      {{"app-server", "--store", "disk"}, "disk"},
      {{"app-server", "--store"}, "--store"},
      {{"app-server", "--approval-timeout=2x"}, "2x"},
      {{"app-server", "--idle-unload", "soon"}, "soon"},
      {{"app-server", "--durability", "sometimes"}, "sometimes"},
      {{"app-server", "--log-level", "loud"}, "loud"},
      {{"app-server", "--threads", "many"}, "many"},
      {{"chat", "--approval-timeout", "x"}, "--approval-timeout"},
      {{"store"}, "subcommand"},
      {{"store", "reindex", "--json"}, "--json"},
      {{"cluster"}, "subcommand"},
      {{"audit", "verify", "--home", "/h", "file"}, "excludes"},
  };
  for (auto& [args, expected] : cases) {
    auto o = run_parley(args);
    EXPECT_EQ(o.code, 2) << shown(args);
    EXPECT_EQ(o.out, "") << shown(args);
    EXPECT_EQ(o.err.rfind("parley: ", 0), 0u) << shown(args) << o.err;
    EXPECT_NE(o.err.find(expected), std::string::npos) << shown(args) << o.err;
    EXPECT_NE(o.err.find("usage:"), std::string::npos) << shown(args) << o.err;
  }
}

TEST(CommandLine, the_home_falls_back_to_PARLEY_HOME) {
  auto dir = make_temp_dir("command_line_env");
  auto o = run_parley({"store", "reindex"}, "PARLEY_HOME=" + shell_quoted(dir + "/home"));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "indexed 0 thread(s) under " + dir + "/home\n");
  // --home wins over the environment, in either form.
  auto given = run_parley({"store", "reindex", "--home", dir + "/other"},
                          "PARLEY_HOME=" + shell_quoted(dir + "/home"));
  EXPECT_EQ(given.out, "indexed 0 thread(s) under " + dir + "/other\n");
}

}  // namespace
}  // namespace parley::test
