// Every approval's lifecycle reaches the hash-chained audit log, and
// `parley audit verify` catches an edited line.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  char buf[512];
  while (auto n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f{path};
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

// A decision that lets an action run is audited before it takes effect:
// one whose audit line cannot be written runs nothing (the log cannot be
// opened here: its folder is a file).
TEST(audit, an_accept_the_log_cannot_record_runs_nothing) {
  auto dir = make_temp_dir("audit_unwritable");
  std::ofstream{dir + "/not-a-folder"} << "x";
  app_server_client c{{"--home=" + dir + "/home", "--audit=" + dir + "/not-a-folder/audit.jsonl"}};
  c.initialize();
  auto thread = c.start_thread(json{{"cwd", dir}});
  c.start_turn(thread, "run[escalate]: touch ran\nsay: done");
  c.answer(c.wait_for_method("item/commandExecution/requestApproval"), "accept");
  json item;
  for (;;) {
    auto m = c.wait_for_method("item/completed");
    if (m["params"]["item"]["type"] == "commandExecution") {
      item = m["params"]["item"];
      break;
    }
  }
  EXPECT_NE(item["status"], "completed") << item;
  c.wait_for_method("turn/completed");
  EXPECT_FALSE(std::filesystem::exists(dir + "/ran")) << "accepted but not audited: must not run";
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(audit, every_approval_outcome_is_chained_and_verified) {
  auto dir = make_temp_dir("audit_chain");
  auto home = dir + "/home";
  {
    app_server_client c{{"--home=" + home, "--approval-timeout=300ms"}};
    c.initialize();
    auto thread = c.start_thread(json{{"cwd", dir}});
    c.start_turn(thread, "run[escalate]: true\nrun[escalate]: echo no\nrun[escalate]: echo late");
    c.answer(c.wait_for_method("item/commandExecution/requestApproval"), "accept");
    c.answer(c.wait_for_method("item/commandExecution/requestApproval"), "decline");
    c.wait_for_method("item/commandExecution/requestApproval");  // times out
    c.wait_for_method("turn/completed");
    auto turn = c.start_turn(thread, "run[escalate]: sleep 5");
    c.wait_for_method("item/commandExecution/requestApproval");
    c.call_ok("turn/interrupt", json{{"threadId", thread}, {"turnId", turn}});
    c.wait_for_method("turn/completed");
    EXPECT_EQ(c.close_and_wait(), 0);
  }
  auto path = home + "/audit.jsonl";
  auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 8u);
  std::vector<std::string> events;
  for (auto& l : lines) events.push_back(json::parse(l)["event"]);
  EXPECT_EQ(events, (std::vector<std::string>{"requested", "decided", "requested", "decided",
                                              "requested", "timed_out", "requested", "cancelled"}));
  auto accepted = json::parse(lines[1]);
  EXPECT_EQ(accepted["decision"], "accept");
  EXPECT_EQ(accepted["runs"], true);
  EXPECT_EQ(accepted["stage"], "client");
  EXPECT_EQ(accepted["command"], "/bin/sh -c 'true'");
  EXPECT_TRUE(accepted["latency_ms"].is_number());
  EXPECT_EQ(json::parse(lines[3])["runs"], false);
  EXPECT_EQ(json::parse(lines[5])["stage"], "deadline");
  EXPECT_EQ(json::parse(lines[7])["stage"], "interrupt");
  EXPECT_EQ(json::parse(lines[0])["seq"], 1);

  auto [ok_code, ok_out] = run(parley_binary() + " audit verify --home=" + home);
  EXPECT_EQ(ok_code, 0) << ok_out;
  EXPECT_NE(ok_out.find("ok: 8 line(s)"), std::string::npos) << ok_out;

  // Someone turns the decline into an accept after the fact.
  auto pos = lines[3].find("\"decision\":\"decline\"");
  ASSERT_NE(pos, std::string::npos);
  lines[3].replace(pos, 20, "\"decision\":\"accept\"");
  {
    std::ofstream f{path, std::ios::trunc};
    for (auto& l : lines) f << l << '\n';
  }
  auto [bad_code, bad_out] = run(parley_binary() + " audit verify " + path);
  EXPECT_EQ(bad_code, 1) << bad_out;
  EXPECT_NE(bad_out.find("line 4"), std::string::npos) << bad_out;
}

}  // namespace
}  // namespace parley::test
