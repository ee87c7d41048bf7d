// The harness end to end against the real parley binary (small; no timing
// assertions): the run is valid and every documented JSON key is there.

#include <arpa/inet.h>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

int run(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A loopback port nothing listens on right now (the kernel's pick).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), len);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// parley-bench against a parley listening on `listen`, connecting to
/// `connect`; the run's JSON figures (the test fails on a nonzero exit).
nlohmann::json run_ws(const std::string& name, const std::string& listen, const std::string& connect,
                      const std::string& args) {
  auto dir = make_temp_dir(name);
  auto server = parley_binary() + " app-server --store=memory --log-level=warn --listen " + listen;
  auto cmd = std::string{PARLEY_BENCH_BINARY} + " --server '" + server + "' --connect " + connect + " "
             + args + " --quiet --server-log " + dir + "/server.log --json " + dir + "/run.json > " + dir
             + "/out.txt 2>&1";
  int code = run(cmd);
  EXPECT_EQ(code, 0) << std::ifstream{dir + "/out.txt"}.rdbuf();
  if (code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(std::ifstream{dir + "/run.json"});
}

#ifdef PARLEY_MOCK_MODEL_BINARY
/// parley-bench against parley with the mock as its model
/// (bench/parley_with_mock.sh), every turn `prompt`; the run's JSON figures
/// and the server's log (the test fails on a nonzero exit).
nlohmann::json run_with_mock(const std::string& name, const std::string& prompt,
                             const std::string& args, std::string* server_log = nullptr) {
  auto dir = make_temp_dir(name);
  auto cmd = std::string{"PARLEY_BIN="} + parley_binary() + " MOCK_BIN=" + PARLEY_MOCK_MODEL_BINARY + " "
             + PARLEY_BENCH_BINARY + " --server '" + PARLEY_SOURCE_DIR
             + "/bench/parley_with_mock.sh --store=memory --log-level=warn' --prompt '" + prompt + "' "
             + args + " --quiet --server-log " + dir + "/server.log --json " + dir + "/run.json > " + dir
             + "/out.txt 2>&1";
  int code = run(cmd);
  std::string log{std::istreambuf_iterator<char>(std::ifstream{dir + "/server.log"}.rdbuf()), {}};
  if (server_log) *server_log = log;
  EXPECT_EQ(code, 0) << std::ifstream{dir + "/out.txt"}.rdbuf() << log;
  if (code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(std::ifstream{dir + "/run.json"});
}
#endif

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
                   "server_peak_rss_kb", "server_cpu_s", "harness_cpu_s", "approvals", "errors", "violations"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (auto key : {"turn_ms", "approval_request_ms", "answer_to_resolved_ms", "answer_to_completed_ms"})
    for (auto p : {"p50", "p90", "p99", "max"}) EXPECT_TRUE(j[key].contains(p)) << key << "." << p;
  EXPECT_EQ(j["threads"], 20);
  EXPECT_EQ(j["turns_completed"], 40);
  EXPECT_EQ(j["approvals"], 80);
  EXPECT_EQ(j["violations"], nlohmann::json::array());
  EXPECT_EQ(j["errors"], nlohmann::json::object());
  EXPECT_GT(j["server_peak_rss_kb"].get<int64_t>(), 0);
  EXPECT_EQ(j["transport"], "stdio");
  EXPECT_EQ(j["connections"], 1);
  EXPECT_EQ(j["clients_per_thread"], 1);
  EXPECT_EQ(j["agent_message_deltas"], 0);  // the scripted model sends whole messages
}

TEST(parley_bench, threads_spread_over_websocket_connections) {
  for (auto mix : {"decline=1", "accept=1", "accept=1,decline=1"}) {
    auto port = std::to_string(free_port());
    auto j = run_ws("bench_ws", "ws://127.0.0.1:" + port, "ws://127.0.0.1:" + port,
                    std::string{"--threads 50 --connections 5 --mix "} + mix);
    ASSERT_FALSE(j.empty()) << mix;
    EXPECT_EQ(j["transport"], "ws");
    EXPECT_EQ(j["connections"], 5);
    EXPECT_EQ(j["turns_completed"], 50) << mix;
    EXPECT_EQ(j["approvals"], 50) << mix;
    EXPECT_EQ(j["approval_requests"], 50) << mix;
    EXPECT_EQ(j["answer_to_resolved_ms"]["count"], 50) << mix;
    EXPECT_EQ(j["answer_to_completed_ms"]["count"], 50) << mix;
    EXPECT_EQ(j["violations"], nlohmann::json::array()) << j["violations"].dump();
    EXPECT_EQ(j["errors"], nlohmann::json::object()) << j["errors"].dump();
    EXPECT_FALSE(j.contains("memory_per_idle_connection_kb"));
  }
}

TEST(parley_bench, two_clients_per_thread_each_approval_answered_once) {
  auto port = std::to_string(free_port());
  auto j = run_ws("bench_ws2", "ws://127.0.0.1:" + port, "ws://127.0.0.1:" + port,
                  "--threads 40 --turns 2 --connections 4 --clients-per-thread 2 --mix accept=1,decline=1");
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["clients_per_thread"], 2);
  EXPECT_EQ(j["turns_completed"], 80);
  EXPECT_EQ(j["approvals"], 80);
  EXPECT_EQ(j["approval_requests"], 160);  // each asked on both connections
  // Measured on the answering connection only: one answer per approval.
  EXPECT_EQ(j["answer_to_resolved_ms"]["count"], 80);
  EXPECT_EQ(j["answer_to_completed_ms"]["count"], 80);
  EXPECT_EQ(j["violations"], nlohmann::json::array()) << j["violations"].dump();
  EXPECT_EQ(j["errors"], nlohmann::json::object()) << j["errors"].dump();
}

TEST(parley_bench, a_unix_socket_and_memory_per_idle_connection) {
  auto dir = make_temp_dir("bench_unix_sock");
  auto url = "unix://" + dir + "/app-server.sock";
  auto j = run_ws("bench_unix", url, url, "--threads 20 --connections 2 --idle-connections 50");
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["transport"], "unix");
  EXPECT_EQ(j["turns_completed"], 20);
  EXPECT_EQ(j["approvals"], 20);
  EXPECT_EQ(j["violations"], nlohmann::json::array()) << j["violations"].dump();
  EXPECT_EQ(j["errors"], nlohmann::json::object()) << j["errors"].dump();
  EXPECT_EQ(j["idle_connections"], 50);
  ASSERT_TRUE(j.contains("memory_per_idle_connection_kb"));
  EXPECT_TRUE(j["memory_per_idle_connection_kb"].is_number());
  EXPECT_GT(j["idle_rss_delta_kb"].get<int64_t>(), 0);  // 50 sessions cost something
}

// parley with the mock as its model (bench/parley_with_mock.sh), a --prompt
// that streams a message in words, runs one command and streams another:
// every delta is counted, every approval decided once.
TEST(parley_bench, a_prompt_through_the_mock_model_counts_every_delta) {
#ifndef PARLEY_MOCK_MODEL_BINARY
  GTEST_SKIP() << "parley-mock-model is not built (cpp-httplib missing)";
#else
  // The mock streams a `say` one word (and its space) per delta: 5 + 3.
  std::string log;
  auto j = run_with_mock("bench_mock",
                         "mock: say one two three four five\nmock: run true\nmock: say six seven eight",
                         "--threads 12 --turns 2", &log);
  EXPECT_EQ(j["turns_completed"], 24);
  EXPECT_EQ(j["approvals"], 24);
  EXPECT_EQ(j["agent_message_deltas"], 24 * 8);
  EXPECT_GT(j["deltas_per_s"].get<double>(), 0);
  EXPECT_EQ(j["violations"], nlohmann::json::array()) << j["violations"].dump();
  EXPECT_EQ(j["errors"], nlohmann::json::object()) << j["errors"].dump();
  // The wrapper reports the mock's share when parley exits.
  EXPECT_NE(log.find("parley_with_mock.sh: mock cpu_s="), std::string::npos) << log;
#endif
}

// Issue 11's scale check: 1,000 turns streaming from the mock model at once
// in one parley process, each asking one approval (accepted): every approval
// is decided exactly once and every turn completes (the harness's ledger).
TEST(parley_bench, a_thousand_concurrent_streaming_turns_decide_every_approval_once) {
#ifndef PARLEY_MOCK_MODEL_BINARY
  GTEST_SKIP() << "parley-mock-model is not built (cpp-httplib missing)";
#else
  auto j = run_with_mock("bench_mock_1000",
                         "mock: say streaming a few words first\nmock: run true\nmock: say and done",
                         "--threads 1000 --timeout 240");
  EXPECT_EQ(j["concurrency"], 1000);
  EXPECT_EQ(j["turns_completed"], 1000);
  EXPECT_EQ(j["approvals"], 1000);
  EXPECT_EQ(j["agent_message_deltas"], 1000 * 8);
  EXPECT_EQ(j["violations"], nlohmann::json::array()) << j["violations"].dump();
  EXPECT_EQ(j["errors"], nlohmann::json::object()) << j["errors"].dump();
#endif
}

TEST(parley_bench, websocket_options_are_checked) {
  auto bench = std::string{PARLEY_BENCH_BINARY} + " --server true --quiet ";
  EXPECT_EQ(run(bench + "--connections 2 > /dev/null 2>&1"), 2);  // several sessions need --connect
  EXPECT_EQ(run(bench + "--connect ws://127.0.0.1:1 --connections 1 --clients-per-thread 2 > /dev/null 2>&1"), 2);
  EXPECT_EQ(run(bench + "--connect http://x > /dev/null 2>&1"), 2);
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
