// The argument list a command runs with: through parley-sandbox, confined as
// its thread's sandbox says, outside it only for full access or an accepted
// escalation, refused where the host cannot confine it.

#include "actors/core/command_sandbox.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>

namespace parley {
namespace command_sandbox_test {

sandbox_settings confining() {
  sandbox_settings s;
  s.launcher = "/opt/parley/parley-sandbox";
  s.available = true;
  s.hidden = {"/srv/parley-home"};
  s.limits.max_processes = 64;
  return s;
}

std::vector<std::string> argv_of(const std::variant<command_launch, launch_refusal>& launch) {
  if (auto* l = std::get_if<command_launch>(&launch)) return l->argv;
  ADD_FAILURE() << "refused: " << std::get<launch_refusal>(launch).reason;
  return {};
}

/// The values given for `flag`, in order.
std::vector<std::string> values_of(const std::vector<std::string>& argv, const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < argv.size() && argv[i] != "--"; ++i)
    if (argv[i] == flag) out.push_back(argv[i + 1]);
  return out;
}

/// What follows "--": the command itself.
std::vector<std::string> command_of(const std::vector<std::string>& argv) {
  auto dash = std::find(argv.begin(), argv.end(), "--");
  return dash == argv.end() ? std::vector<std::string>{} : std::vector<std::string>(dash + 1, argv.end());
}

TEST(command_sandbox, workspace_write_names_its_roots_hides_the_home_and_keeps_the_network_off) {
  auto policy = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write);
  policy.writable_roots = {"/data/shared"};
  std::vector<std::string> env{"PATH=/usr/bin", "TMPDIR=/var/tmp/t"};
  auto argv = argv_of(command_argv(confining(), policy, "/work/repo", "make test", false, &env));
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "/opt/parley/parley-sandbox");
  EXPECT_EQ(values_of(argv, "--mode"), std::vector<std::string>{"workspace-write"});
  EXPECT_EQ(values_of(argv, "--writable"),
            (std::vector<std::string>{"/data/shared", "/tmp", "/var/tmp/t", "/work/repo"}));
  EXPECT_EQ(values_of(argv, "--network"), std::vector<std::string>{"off"});
  EXPECT_EQ(values_of(argv, "--hide"), std::vector<std::string>{"/srv/parley-home"});
  EXPECT_EQ(values_of(argv, "--max-processes"), std::vector<std::string>{"64"});
  EXPECT_EQ(command_of(argv), (std::vector<std::string>{"/bin/sh", "-c", "make test"}));
}

TEST(command_sandbox, the_policy_may_leave_out_the_temporary_folders_and_let_the_network_in) {
  auto policy = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write);
  policy.exclude_slash_tmp = true;
  policy.exclude_tmpdir_env_var = true;
  policy.network_access = true;
  std::vector<std::string> env{"TMPDIR=/var/tmp/t"};
  auto argv = argv_of(command_argv(confining(), policy, "/work/repo", "true", false, &env));
  EXPECT_EQ(values_of(argv, "--writable"), std::vector<std::string>{"/work/repo"});
  EXPECT_EQ(values_of(argv, "--network"), std::vector<std::string>{"on"});
}

TEST(command_sandbox, isolated_reads_are_asked_of_confined_commands_only) {
  auto s = confining();
  s.isolate_reads = true;
  auto ws = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write);
  auto argv = argv_of(command_argv(s, ws, "/w", "ls", false, nullptr));
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--isolate-reads"), argv.end());
  auto full = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::danger_full_access);
  argv = argv_of(command_argv(s, full, "/w", "ls", false, nullptr));
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--isolate-reads"), argv.end());
}

TEST(command_sandbox, read_only_has_no_writable_root) {
  auto policy = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::read_only);
  auto argv = argv_of(command_argv(confining(), policy, "/work/repo", "ls", false, nullptr));
  EXPECT_EQ(values_of(argv, "--mode"), std::vector<std::string>{"read-only"});
  EXPECT_TRUE(values_of(argv, "--writable").empty());
  EXPECT_EQ(values_of(argv, "--hide"), std::vector<std::string>{"/srv/parley-home"});
}

TEST(command_sandbox, a_grant_widens_a_confined_command_by_exactly_what_it_names) {
  sandbox_grant g;
  g.write = {"/data/out"};
  g.read = {"/data/in"};
  g.network = true;
  auto ro = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::read_only);
  auto argv = argv_of(command_argv(confining(), ro, "/work/repo", "ls", false, nullptr, &g));
  // Read-only plus the granted path: that path alone is writable.
  EXPECT_EQ(values_of(argv, "--mode"), std::vector<std::string>{"workspace-write"});
  EXPECT_EQ(values_of(argv, "--writable"), std::vector<std::string>{"/data/out"});
  EXPECT_EQ(values_of(argv, "--network"), std::vector<std::string>{"on"});
  EXPECT_EQ(values_of(argv, "--hide"), std::vector<std::string>{"/srv/parley-home"});
  EXPECT_TRUE(values_of(argv, "--readable").empty());  // everything is readable already
  auto ws = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write);
  ws.exclude_slash_tmp = ws.exclude_tmpdir_env_var = true;
  auto s = confining();
  s.isolate_reads = true;
  argv = argv_of(command_argv(s, ws, "/work/repo", "ls", false, nullptr, &g));
  EXPECT_EQ(values_of(argv, "--writable"), (std::vector<std::string>{"/work/repo", "/data/out"}));
  EXPECT_EQ(values_of(argv, "--readable"), std::vector<std::string>{"/data/in"});
  // An empty grant changes nothing.
  sandbox_grant none;
  EXPECT_EQ(argv_of(command_argv(confining(), ro, "/w", "ls", false, nullptr, &none)),
            argv_of(command_argv(confining(), ro, "/w", "ls", false, nullptr)));
  none.merge(g);
  none.merge(g);
  EXPECT_EQ(none.write, std::vector<std::string>{"/data/out"});
  EXPECT_TRUE(none.network);
}

TEST(command_sandbox, full_access_and_an_accepted_escalation_run_outside_with_the_limits_still) {
  auto full = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::danger_full_access);
  auto ws = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write);
  for (auto launch : {command_argv(confining(), full, "/w", "x", false, nullptr),
                      command_argv(confining(), ws, "/w", "x", true, nullptr)}) {
    ASSERT_TRUE(std::holds_alternative<command_launch>(launch));
    const auto& l = std::get<command_launch>(launch);
    EXPECT_TRUE(l.unconfined);
    EXPECT_EQ(values_of(l.argv, "--mode"), std::vector<std::string>{"danger-full-access"});
    EXPECT_TRUE(values_of(l.argv, "--hide").empty());
    EXPECT_EQ(values_of(l.argv, "--max-processes"), std::vector<std::string>{"64"});
  }
}

TEST(command_sandbox, outside_the_sandbox_without_limits_the_shell_runs_as_it_is) {
  auto s = confining();
  s.limits.max_processes = 0;
  auto full = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::danger_full_access);
  auto argv = argv_of(command_argv(s, full, "/w", "make", false, nullptr));
  EXPECT_EQ(argv, (std::vector<std::string>{"/bin/sh", "-c", "make"}));
  // Confined commands still go through the launcher.
  auto ws = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write);
  EXPECT_EQ(argv_of(command_argv(s, ws, "/w", "make", false, nullptr)).at(0), s.launcher);
}

TEST(command_sandbox, a_host_that_cannot_confine_refuses_unless_the_operator_accepted_it) {
  auto s = confining();
  s.available = false;
  s.unavailable = "no user namespaces";
  auto ws = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write);
  auto refused = command_argv(s, ws, "/w", "rm -rf x", false, nullptr);
  ASSERT_TRUE(std::holds_alternative<launch_refusal>(refused));
  EXPECT_NE(std::get<launch_refusal>(refused).reason.find("no user namespaces"), std::string::npos);
  s.unconfined_ok = true;
  auto ran = command_argv(s, ws, "/w", "rm -rf x", false, nullptr);
  ASSERT_TRUE(std::holds_alternative<command_launch>(ran));
  EXPECT_TRUE(std::get<command_launch>(ran).unconfined);
  // Full access needs no confinement: it runs either way.
  s.unconfined_ok = false;
  auto full = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::danger_full_access);
  EXPECT_TRUE(std::holds_alternative<command_launch>(command_argv(s, full, "/w", "x", false, nullptr)));
  // Without a launcher at all: refused too.
  sandbox_settings none;
  EXPECT_TRUE(std::holds_alternative<launch_refusal>(command_argv(none, ws, "/w", "x", false, nullptr)));
}

TEST(command_sandbox, a_timeout_is_the_calls_bounded_by_the_maximum_else_the_default) {
  command_limits limits;
  limits.default_timeout = std::chrono::seconds(30);
  limits.max_timeout = std::chrono::seconds(60);
  EXPECT_EQ(command_timeout(limits, 0), std::chrono::seconds(30));
  EXPECT_EQ(command_timeout(limits, 1500), std::chrono::milliseconds(1500));
  EXPECT_EQ(command_timeout(limits, 3'600'000), std::chrono::seconds(60));
}

/// A launcher that answers --check with `answer` and `code`.
std::string fake_launcher(const std::string& name, const std::string& answer, int code) {
  auto dir = std::filesystem::temp_directory_path() / ("parley-fake-launcher-" + name);
  std::filesystem::create_directories(dir);
  auto path = (dir / "parley-sandbox").string();
  std::ofstream(path) << "#!/bin/sh\necho '" << answer << "'\nexit " << code << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST(command_sandbox, a_host_without_a_pids_cgroup_drops_the_process_cap_and_says_so) {
  sandbox_settings s;
  s.launcher = fake_launcher(
      "nopids", R"({"filesystem":true,"network":true,"processes":false,"reason":"no cgroup"})", 0);
  s.limits.max_processes = 1024;
  probe_sandbox(s);
  EXPECT_TRUE(s.available);
  EXPECT_EQ(s.limits.max_processes, 0u);
  EXPECT_FALSE(s.limits_dropped.empty());
  EXPECT_NE(describe_sandbox(s).find("no process cap"), std::string::npos);
  // A host that cannot confine at all is unavailable, with the launcher's words.
  sandbox_settings none;
  none.launcher = fake_launcher("nofs", R"({"filesystem":false,"reason":"no user namespaces"})", 1);
  probe_sandbox(none);
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.unavailable.find("no user namespaces"), std::string::npos);
}

TEST(command_sandbox, a_missing_launcher_is_said_by_the_probe) {
  sandbox_settings s;
  s.launcher = "/nonexistent/parley-sandbox";
  probe_sandbox(s);
  EXPECT_FALSE(s.available);
  EXPECT_NE(s.unavailable.find("/nonexistent/parley-sandbox"), std::string::npos) << s.unavailable;
}


TEST(command_sandbox, a_refusal_is_read_from_what_the_sandbox_answers_and_nothing_else) {
  EXPECT_TRUE(looks_refused_by_sandbox(1, "touch: cannot touch '/opt/x': Read-only file system\n"));
  EXPECT_TRUE(looks_refused_by_sandbox(2, "ls: cannot open directory '/srv/home': Permission denied"));
  EXPECT_TRUE(looks_refused_by_sandbox(1, "socket: Operation not permitted"));
  EXPECT_TRUE(looks_refused_by_sandbox(7, "curl: (7) Couldn't connect: Network is unreachable"));
  EXPECT_TRUE(looks_refused_by_sandbox(159, "Bad system call"));
  // Success, a failure of the command's own, and the launcher's own setup
  // failure are not refusals.
  EXPECT_FALSE(looks_refused_by_sandbox(0, "Permission denied (but it went on)"));
  EXPECT_FALSE(looks_refused_by_sandbox(1, ""));
  EXPECT_FALSE(looks_refused_by_sandbox(2, "grep: pattern not found"));
  EXPECT_FALSE(looks_refused_by_sandbox(
      125, "parley-sandbox: cannot create a user namespace: Operation not permitted"));
}

TEST(command_sandbox, the_limit_that_stopped_a_command_is_named_only_when_it_was_set) {
  command_limits limits;
  limits.max_cpu_seconds = 2;
  limits.max_memory_bytes = 1 << 28;
  limits.max_processes = 64;
  EXPECT_THAT(limit_that_stopped(limits, 128 + SIGXCPU, ""),
              ::testing::HasSubstr("hit its CPU time limit (2 s"));
  EXPECT_THAT(limit_that_stopped(limits, 1, "MemoryError\n"),
              ::testing::HasSubstr("hit its memory limit (268435456 bytes"));
  EXPECT_THAT(limit_that_stopped(limits, 0, "sh: 1: Cannot fork\nstarted\n"),
              ::testing::HasSubstr("hit its process limit (64"));
  EXPECT_THAT(limit_that_stopped(limits, 2, "bash: fork: retry: Resource temporarily unavailable"),
              ::testing::HasSubstr("process limit"));
  EXPECT_EQ(limit_that_stopped(limits, 1, "grep: no match"), "");
  EXPECT_EQ(limit_that_stopped(limits, 0, "MemoryError (handled)"), "")
      << "a command that went on after a failed allocation was not stopped by it";
  command_limits none;
  none.max_processes = 0;
  EXPECT_EQ(limit_that_stopped(none, 128 + SIGXCPU, "MemoryError\nCannot fork"), "")
      << "no cap set: nothing is blamed on one";
}

}  // namespace command_sandbox_test
}  // namespace parley
