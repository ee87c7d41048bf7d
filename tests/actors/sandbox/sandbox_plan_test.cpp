#include "actors/sandbox/sandbox_plan.hpp"

#include <gtest/gtest.h>

using namespace parley::sandbox;

namespace {

parse_result parse(std::vector<std::string> args) {
  return parse_arguments(args);
}

} // namespace

TEST(sandbox_plan, parses_the_full_command_line) {
  auto r = parse({"--mode", "workspace-write", "--writable", "/w", "--writable=/tmp/x",
                  "--hide", "/home/p/.parley", "--network", "on", "--isolate-reads",
                  "--readable", "/data", "--max-memory", "1048576", "--max-cpu=3",
                  "--max-processes", "20", "--max-file-size", "4096", "--", "/bin/sh", "-c",
                  "echo --mode"});
  ASSERT_TRUE(r.parsed) << r.error;
  const auto& p = *r.parsed;
  EXPECT_EQ(p.sandbox_mode, mode::workspace_write);
  EXPECT_EQ(p.writable, (std::vector<std::string>{"/w", "/tmp/x"}));
  EXPECT_EQ(p.hidden, (std::vector<std::string>{"/home/p/.parley"}));
  EXPECT_EQ(p.readable, (std::vector<std::string>{"/data"}));
  EXPECT_TRUE(p.network);
  EXPECT_TRUE(p.isolate_reads);
  EXPECT_EQ(p.limits.max_memory, 1048576u);
  EXPECT_EQ(p.limits.max_cpu, 3u);
  EXPECT_EQ(p.limits.max_processes, 20u);
  EXPECT_EQ(p.limits.max_file_size, 4096u);
  EXPECT_EQ(p.command, (std::vector<std::string>{"/bin/sh", "-c", "echo --mode"}));
  EXPECT_FALSE(p.check);
}

TEST(sandbox_plan, network_is_off_and_nothing_is_limited_by_default) {
  auto r = parse({"--mode", "read-only", "--", "true"});
  ASSERT_TRUE(r.parsed) << r.error;
  EXPECT_FALSE(r.parsed->network);
  EXPECT_FALSE(r.parsed->limits.max_memory);
  EXPECT_FALSE(r.parsed->limits.max_processes);
  EXPECT_EQ(to_string(r.parsed->sandbox_mode), std::string("read-only"));
}

TEST(sandbox_plan, check_needs_neither_mode_nor_command) {
  auto r = parse({"--check"});
  ASSERT_TRUE(r.parsed) << r.error;
  EXPECT_TRUE(r.parsed->check);
}

TEST(sandbox_plan, refuses_what_the_contract_does_not_allow) {
  const std::vector<std::vector<std::string>> bad = {
    {"--", "true"},                                                  // no mode
    {"--mode", "write-all", "--", "true"},                           // unknown mode
    {"--mode", "read-only"},                                         // no command
    {"--mode", "read-only", "--"},                                   // empty command
    {"--mode", "read-only", "--writable", "/w", "--", "true"},       // writable not in ws-write
    {"--mode", "workspace-write", "--writable", "rel", "--", "true"}, // relative
    {"--mode", "read-only", "--readable", "/d", "--", "true"},       // no --isolate-reads
    {"--mode", "read-only", "--network", "maybe", "--", "true"},
    {"--mode", "read-only", "--max-cpu", "0", "--", "true"},
    {"--mode", "read-only", "--max-memory", "12k", "--", "true"},
    {"--mode", "read-only", "--max-processes", "-1", "--", "true"},
    {"--mode", "read-only", "--frobnicate", "--", "true"},
    {"--mode"},
  };
  for (const auto& args : bad) {
    auto r = parse(args);
    EXPECT_FALSE(r.parsed) << args.size();
    EXPECT_FALSE(r.error.empty());
  }
}
