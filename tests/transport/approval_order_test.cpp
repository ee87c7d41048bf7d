// The order in which a client sees an approval's events, on every path
// (answered, interrupted, timed out; command and file change), against the
// real binary. Deltas count once. The approval actor alone announces the item and the waiting
// status and settles them, so these pin Codex's order (protocol.md §4).

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

const std::string waiting
    = R"(thread/status/changed:{"activeFlags":["waitingOnApproval"],"type":"active"})";
const std::string active = R"(thread/status/changed:{"activeFlags":[],"type":"active"})";
const std::string idle = R"(thread/status/changed:{"type":"idle"})";

/// The methods a thread's turn produces up to turn/completed (status changes
/// with their status; output deltas once), calling `on_request` for each
/// approval request.
std::vector<std::string> methods_of_turn(app_server_client& c,
                                         const std::function<void(const json&)>& on_request) {
  std::vector<std::string> methods;
  for (;;) {
    auto m = c.next();
    auto method = method_of(m);
    if (method.empty()) continue;  // a response
    bool delta = method.size() > 5 && method.compare(method.size() - 5, 5, "Delta") == 0;
    if ((delta || method == "item/agentMessage/delta") && methods.back() == method) continue;
    methods.push_back(method);
    if (method == "thread/status/changed") methods.back() += ":" + m["params"]["status"].dump();
    if (method.find("requestApproval") != std::string::npos) on_request(m);
    if (method == "turn/completed") {
      methods.back() += ":" + m["params"]["turn"]["status"].get<std::string>();
      return methods;
    }
  }
}

const std::vector<std::string> user_message
    = {active, "turn/started", "item/started", "item/completed"};

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(approval_order, an_interrupt_resolves_the_prompt_before_the_item_ends) {
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread(json{{"approvalPolicy", "on-request"}});
  auto turn = c.start_turn(thread, "run[escalate]: touch never");
  auto methods = methods_of_turn(c, [&](const json&) {
    c.send("turn/interrupt", json{{"threadId", thread}, {"turnId", turn}});
  });
  EXPECT_EQ(methods,
            joined(user_message, {waiting, "item/started", "item/commandExecution/requestApproval",
                                  "serverRequest/resolved", active, "item/completed", idle,
                                  "turn/completed:interrupted"}));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(approval_order, a_deadline_resolves_the_prompt_and_the_turn_goes_on) {
  app_server_client c{{"--approval-timeout=200ms"}};
  c.initialize();
  auto thread = c.start_thread(json{{"approvalPolicy", "on-request"}});
  c.start_turn(thread, "run[escalate]: touch never");
  auto methods = methods_of_turn(c, [](const json&) {});
  EXPECT_EQ(methods,
            joined(user_message, {waiting, "item/started", "item/commandExecution/requestApproval",
                                  "serverRequest/resolved", active, "item/completed", idle,
                                  "turn/completed:completed"}));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(approval_order, a_file_change_starts_before_the_thread_waits) {
  auto dir = make_temp_dir("approval_order_file");
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread(json{{"approvalPolicy", "on-request"}, {"cwd", dir}});
  c.start_turn(thread, "patch:\n*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch");
  auto methods = methods_of_turn(c, [&](const json& m) { c.answer(m, "accept"); });
  EXPECT_EQ(methods,
            joined(user_message, {"item/started", waiting, "item/fileChange/requestApproval",
                                  "serverRequest/resolved", active, "item/completed",
                                  "turn/diff/updated", idle, "turn/completed:completed"}));
  EXPECT_TRUE(std::filesystem::exists(dir + "/a.txt"));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(approval_order, a_declined_command_ends_its_item_after_the_status) {
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread(json{{"approvalPolicy", "on-request"}});
  c.start_turn(thread, "run[escalate]: touch never\nsay: after");
  auto methods = methods_of_turn(c, [&](const json& m) { c.answer(m, "decline"); });
  EXPECT_EQ(methods,
            joined(user_message, {waiting, "item/started", "item/commandExecution/requestApproval",
                                  "serverRequest/resolved", active, "item/completed",
                                  "item/started", "item/agentMessage/delta", "item/completed", idle,
                                  "turn/completed:completed"}));
  EXPECT_EQ(c.close_and_wait(), 0);
}

}  // namespace
}  // namespace parley::test
