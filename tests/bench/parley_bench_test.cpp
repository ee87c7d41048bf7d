// The harness end to end against the real parley binary (small; no timing
// assertions): the run is valid and every documented JSON key is there.

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

int run(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(parley_bench, a_small_run_against_parley_is_valid) {
  auto dir = make_temp_dir("bench_e2e");
  auto server = parley_binary() + " app-server --store=memory --log-level=warn";
  auto cmd = std::string{PARLEY_BENCH_BINARY} + " --server '" + server
             + "' --threads 20 --turns 2 --approvals 2 --concurrency 8 --mix accept=1,decline=1 --quiet"
             + " --json " + dir + "/run.json > " + dir + "/out.txt 2>&1";
  ASSERT_EQ(run(cmd), 0) << std::ifstream{dir + "/out.txt"}.rdbuf();
  auto j = nlohmann::json::parse(std::ifstream{dir + "/run.json"});
  for (auto key : {"server", "threads", "turns_per_thread", "wall_s", "turns_per_s", "turn_ms",
                   "approval_request_ms", "answer_to_resolved_ms", "answer_to_completed_ms",
                   "server_peak_rss_kb", "server_cpu_s", "approvals", "errors", "violations"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (auto key : {"turn_ms", "approval_request_ms", "answer_to_resolved_ms", "answer_to_completed_ms"})
    for (auto p : {"p50", "p90", "p99", "max"}) EXPECT_TRUE(j[key].contains(p)) << key << "." << p;
  EXPECT_EQ(j["threads"], 20);
  EXPECT_EQ(j["turns_completed"], 40);
  EXPECT_EQ(j["approvals"], 80);
  EXPECT_EQ(j["violations"], nlohmann::json::array());
  EXPECT_EQ(j["errors"], nlohmann::json::object());
  EXPECT_GT(j["server_peak_rss_kb"].get<int64_t>(), 0);
}

TEST(parley_bench, unanswered_approvals_are_resolved_by_the_server_timeout) {
  auto dir = make_temp_dir("bench_never");
  auto server = parley_binary() + " app-server --store=memory --log-level=error --approval-timeout=200ms";
  auto cmd = std::string{PARLEY_BENCH_BINARY} + " --server '" + server
             + "' --threads 5 --mix never=1 --quiet --json " + dir + "/run.json > /dev/null 2>&1";
  ASSERT_EQ(run(cmd), 0);
  auto j = nlohmann::json::parse(std::ifstream{dir + "/run.json"});
  EXPECT_EQ(j["violations"], nlohmann::json::array());
  EXPECT_EQ(j["approvals"], 5);
}

TEST(parley_bench, a_server_that_breaks_the_protocol_fails_the_run) {
  // A "server" that answers initialize, then resolves a request it never made.
  auto dir = make_temp_dir("bench_liar");
  std::ofstream{dir + "/liar.sh"}
      << "#!/bin/sh\nread line\necho '{\"id\":1,\"result\":{}}'\nread line\nread line\n"
         "echo '{\"id\":2,\"result\":{\"thread\":{\"id\":\"T\"}}}'\nread line\n"
         "echo '{\"method\":\"serverRequest/resolved\",\"params\":{\"threadId\":\"T\",\"requestId\":5}}'\n"
         "echo '{\"id\":3,\"result\":{\"turn\":{\"id\":\"U\"}}}'\n"
         "echo '{\"method\":\"turn/completed\",\"params\":{\"threadId\":\"T\",\"turn\":{\"id\":\"U\",\"status\":\"completed\"}}}'\n"
         "cat > /dev/null\n";
  auto cmd = std::string{PARLEY_BENCH_BINARY} + " --server 'sh " + dir + "/liar.sh' --threads 1 --quiet --json "
             + dir + "/run.json > /dev/null 2>&1";
  EXPECT_EQ(run(cmd), 1);
  auto j = nlohmann::json::parse(std::ifstream{dir + "/run.json"});
  ASSERT_FALSE(j["violations"].empty());
  EXPECT_NE(j["violations"][0].get<std::string>().find("unknown request 5"), std::string::npos);
}

}  // namespace
}  // namespace parley::test
