// 200 threads in one server process, each with one turn and one approval,
// answered in random order with random decisions: every approval gets
// exactly one decision, every turn completes, and nothing from one thread
// shows up in another.

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

TEST(many_threads, two_hundred_threads_with_approvals_in_random_order) {
  constexpr int n = 200;
  app_server_client c;
  c.initialize();
  std::vector<std::string> threads;
  std::map<std::string, int> index_of;
  for (int i = 0; i < n; ++i) {
    auto t = c.call_ok("thread/start", json{{"approvalPolicy", "on-request"}})["thread"]["id"];
    threads.push_back(t);
    index_of[t] = i;
  }
  std::map<std::string, std::string> turn_of;  // thread -> turn
  for (int i = 0; i < n; ++i)
    turn_of[threads[i]] = c.start_turn(threads[i], "run[escalate]: echo thread-" + std::to_string(i));

  std::vector<json> requests;
  while (requests.size() < static_cast<size_t>(n))
    requests.push_back(c.wait_for_method("item/commandExecution/requestApproval", 30s));

  std::mt19937 rng{12345};
  std::shuffle(requests.begin(), requests.end(), rng);
  std::map<std::string, std::string> decision_of;  // thread -> decision
  for (auto& r : requests) {
    auto decision = rng() % 2 == 0 ? "accept" : "decline";
    decision_of[r["params"]["threadId"]] = decision;
    c.answer(r, decision);
  }
  int completed = 0;
  while (completed < n) {
    c.wait_for_method("turn/completed", 30s);
    ++completed;
  }
  EXPECT_EQ(c.close_and_wait(), 0);

  // Exactly one request and one resolution per thread, ids never reused.
  std::map<std::string, int> resolved_per_thread;
  std::set<json> request_ids;
  for (auto& m : c.log()) {
    if (method_of(m) == "item/commandExecution/requestApproval") {
      EXPECT_TRUE(request_ids.insert(m["id"]).second) << "request id reused";
    }
    if (method_of(m) == "serverRequest/resolved") ++resolved_per_thread[m["params"]["threadId"]];
  }
  EXPECT_EQ(request_ids.size(), static_cast<size_t>(n));
  for (auto& t : threads) EXPECT_EQ(resolved_per_thread[t], 1) << t;

  for (auto& t : threads) {
    auto i = index_of[t];
    auto log = c.thread_log(t);
    std::string output;
    json command_item;
    int turn_completed = 0;
    for (auto& m : log) {
      auto& p = m["params"];
      if (p.contains("turnId")) {
        EXPECT_EQ(p["turnId"], turn_of[t]) << "foreign turn in " << t;
      }
      if (method_of(m) == "item/commandExecution/outputDelta") output += p["delta"];
      if (method_of(m) == "item/completed" && p["item"]["type"] == "commandExecution")
        command_item = p["item"];
      if (method_of(m) == "turn/completed") {
        ++turn_completed;
        EXPECT_EQ(p["turn"]["status"], "completed");
      }
    }
    EXPECT_EQ(turn_completed, 1);
    if (decision_of[t] == "accept") {
      EXPECT_EQ(output, "thread-" + std::to_string(i) + "\n");
      EXPECT_EQ(command_item["status"], "completed");
    } else {
      EXPECT_EQ(output, "");
      EXPECT_EQ(command_item["status"], "declined");
    }
  }
}

}  // namespace
}  // namespace parley::test
