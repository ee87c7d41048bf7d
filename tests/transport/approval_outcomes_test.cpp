// The outcome table of protocol.md §4 plus parley's timeout row, one test per
// row, against the real binary over real pipes. A row that must not run the
// command proves it with a sentinel file that stays absent; an accept proves
// it with the file present. Under the default policy (on-request) only a
// command that asks to leave the sandbox is asked about: `run[escalate]:`.

#include <filesystem>
#include <gtest/gtest.h>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

constexpr const char* approval_method = "item/commandExecution/requestApproval";

class approval_outcomes : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }

  void start(std::vector<std::string> args, const std::string& policy = "on-request") {
    dir = make_temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    sentinel = dir + "/ran";
    client = std::make_unique<app_server_client>(std::move(args));
    client->initialize();
    thread = client->start_thread(json{{"cwd", dir}, {"approvalPolicy", policy}});
  }

  json approval() { return client->wait_for_method(approval_method); }

  json command_completed() {
    return client->wait_for([](const json& m) {
      return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "commandExecution";
    });
  }

  json turn_completed() { return client->wait_for_method("turn/completed"); }

  json resolved_for(const json& request) {
    return client->wait_for([&](const json& m) {
      return method_of(m) == "serverRequest/resolved" && m["params"]["requestId"] == request["id"];
    });
  }

  std::string dir;
  std::string sentinel;
  std::unique_ptr<app_server_client> client;
  std::string thread;
};

TEST_F(approval_outcomes, accept_runs_the_command) {
  client->start_turn(thread, "run[escalate]: touch ran");
  auto req = approval();
  EXPECT_TRUE(req["id"].is_number_integer());
  EXPECT_FALSE(file_exists(sentinel)) << "ran before the decision";
  client->answer(req, "accept");
  auto resolved = resolved_for(req);
  EXPECT_EQ(resolved["params"]["threadId"], thread);
  auto done = command_completed();
  EXPECT_EQ(done["params"]["item"]["status"], "completed");
  EXPECT_EQ(done["params"]["item"]["exitCode"], 0);
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "completed");
  EXPECT_TRUE(file_exists(sentinel));
  EXPECT_EQ(client->close_and_wait(), 0);
}

TEST_F(approval_outcomes, accept_for_session_stops_asking_for_that_command) {
  client->start_turn(thread, "run[escalate]: touch ran");
  client->answer(approval(), "acceptForSession");
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  ASSERT_TRUE(file_exists(sentinel));
  std::filesystem::remove(sentinel);
  // Same command, next turn: no request, it just runs.
  client->start_turn(thread, "run[escalate]: touch ran");
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  EXPECT_TRUE(file_exists(sentinel));
  // A different command still asks.
  client->start_turn(thread, "run[escalate]: touch other");
  client->answer(approval(), "decline");
  turn_completed();
  EXPECT_FALSE(file_exists(dir + "/other"));
  EXPECT_EQ(client->close_and_wait(), 0);
  int asked_for_ran = 0;
  for (auto& m : client->log())
    asked_for_ran += method_of(m) == approval_method
                     && m["params"]["command"] == "/bin/sh -c 'touch ran'";
  EXPECT_EQ(asked_for_ran, 1) << "asked again after acceptForSession";
}

TEST_F(approval_outcomes, accept_with_execpolicy_amendment_grants_the_prefix) {
  client->start_turn(thread, "run[escalate]: touch ran");
  auto req = approval();
  EXPECT_EQ(req["params"]["proposedExecpolicyAmendment"], json::array({"touch", "ran"}));
  client->respond(req["id"],
                  json{{"decision", {{"acceptWithExecpolicyAmendment", {{"execpolicy_amendment", {"touch"}}}}}}});
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  EXPECT_TRUE(file_exists(sentinel));
  client->start_turn(thread, "run[escalate]: touch second");
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  EXPECT_TRUE(file_exists(dir + "/second"));
  EXPECT_EQ(client->close_and_wait(), 0);
}

TEST_F(approval_outcomes, network_amendment_allow_runs_and_deny_declines) {
  client->start_turn(thread, "run[escalate]: touch ran");
  client->respond(approval()["id"],
                  json{{"decision", {{"applyNetworkPolicyAmendment",
                                      {{"network_policy_amendment", {{"host", "example.com"}, {"action", "deny"}}}}}}}});
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "declined");
  turn_completed();
  EXPECT_FALSE(file_exists(sentinel));
  client->start_turn(thread, "run[escalate]: touch ran");
  client->respond(approval()["id"],
                  json{{"decision", {{"applyNetworkPolicyAmendment",
                                      {{"network_policy_amendment", {{"host", "example.com"}, {"action", "allow"}}}}}}}});
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  EXPECT_TRUE(file_exists(sentinel));
  EXPECT_EQ(client->close_and_wait(), 0);
}

TEST_F(approval_outcomes, decline_skips_the_command_and_the_turn_goes_on) {
  client->start_turn(thread, "run[escalate]: touch ran\nsay: still here");
  auto req = approval();
  client->answer(req, "decline");
  resolved_for(req);
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "declined");
  auto said = client->wait_for([](const json& m) {
    return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "agentMessage";
  });
  EXPECT_EQ(said["params"]["item"]["text"], "still here");
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "completed");
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_FALSE(file_exists(sentinel));
}

TEST_F(approval_outcomes, cancel_declines_and_interrupts_the_turn) {
  client->start_turn(thread, "run[escalate]: touch ran\nsay: never said");
  auto req = approval();
  client->answer(req, "cancel");
  resolved_for(req);
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "declined");
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "interrupted");
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_FALSE(file_exists(sentinel));
  for (auto& m : client->log())
    if (method_of(m) == "item/agentMessage/delta") ADD_FAILURE() << "said after cancel: " << m;
}

TEST_F(approval_outcomes, error_reply_fails_the_item_and_the_turn_goes_on) {
  client->start_turn(thread, "run[escalate]: touch ran\nsay: after");
  auto req = approval();
  client->respond_error(req["id"], -32000, "client could not show the prompt");
  resolved_for(req);
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "failed");
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "completed");
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_FALSE(file_exists(sentinel));
}

TEST_F(approval_outcomes, unparseable_decision_fails_the_item) {
  client->start_turn(thread, "run[escalate]: touch ran");
  auto req = approval();
  client->respond(req["id"], json{{"decision", "bogus"}});
  resolved_for(req);
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "failed");
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "completed");
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_FALSE(file_exists(sentinel));
}

TEST_F(approval_outcomes, timeout_declines_and_resolves_the_request) {
  start({"--approval-timeout=300ms"});
  client->start_turn(thread, "run[escalate]: touch ran");
  auto req = approval();
  // No answer: the server resolves the request itself.
  resolved_for(req);
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "declined");
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "completed");
  // A late accept is ignored: nothing runs, nothing else is resolved.
  client->answer(req, "accept");
  auto counts = client->call_ok("parley/debug/counts");
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_FALSE(file_exists(sentinel));
  int resolved = 0;
  for (auto& m : client->log()) resolved += method_of(m) == "serverRequest/resolved";
  EXPECT_EQ(resolved, 1);
}

TEST_F(approval_outcomes, interrupt_while_pending_resolves_and_declines) {
  auto turn = client->start_turn(thread, "run[escalate]: touch ran");
  auto req = approval();
  auto r = client->call("turn/interrupt", json{{"threadId", thread}, {"turnId", turn}});
  EXPECT_EQ(r["result"], json::object());
  resolved_for(req);
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "declined");
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "interrupted");
  client->answer(req, "accept");  // too late: ignored
  client->call_ok("parley/debug/counts");
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_FALSE(file_exists(sentinel));
}

TEST_F(approval_outcomes, closed_input_cancels_pending_approvals_and_exits_cleanly) {
  client->start_turn(thread, "run[escalate]: touch ran");
  auto req = approval();
  EXPECT_EQ(client->close_and_wait(), 0);
  bool resolved = false, interrupted = false;
  for (auto& m : client->log()) {
    resolved = resolved || (method_of(m) == "serverRequest/resolved" && m["params"]["requestId"] == req["id"]);
    interrupted = interrupted || (method_of(m) == "turn/completed"
                                  && m["params"]["turn"]["status"] == "interrupted");
  }
  EXPECT_TRUE(resolved);
  EXPECT_TRUE(interrupted);
  EXPECT_FALSE(file_exists(sentinel));
}

TEST_F(approval_outcomes, policy_never_runs_without_asking) {
  start({}, "never");
  client->start_turn(thread, "run: touch ran");
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_TRUE(file_exists(sentinel));
  for (auto& m : client->log()) EXPECT_NE(method_of(m), approval_method);
}

TEST_F(approval_outcomes, policy_untrusted_skips_known_read_only_commands) {
  start({}, "untrusted");
  client->start_turn(thread, "run: ls\nrun: touch ran");
  auto first = command_completed();
  EXPECT_EQ(first["params"]["item"]["status"], "completed");
  EXPECT_EQ(first["params"]["item"]["commandActions"][0]["type"], "listFiles");
  auto req = approval();
  EXPECT_EQ(req["params"]["command"], "/bin/sh -c 'touch ran'");
  client->answer(req, "decline");
  turn_completed();
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_FALSE(file_exists(sentinel));
}

TEST_F(approval_outcomes, policy_on_request_runs_confined_commands_without_asking) {
  client->start_turn(thread, "run: touch ran\nrun[escalate]: touch out");
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  EXPECT_TRUE(file_exists(sentinel)) << "the cwd is writable in workspace-write";
  auto req = approval();
  EXPECT_EQ(req["params"]["command"], "/bin/sh -c 'touch out'");
  client->answer(req, "decline");
  turn_completed();
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_FALSE(file_exists(dir + "/out"));
  int asked = 0;
  for (auto& m : client->log()) asked += method_of(m) == approval_method;
  EXPECT_EQ(asked, 1) << "only the escalation asks";
}

TEST_F(approval_outcomes, turn_policy_override_applies_to_later_turns) {
  start({}, "untrusted");
  client->start_turn(thread, "run: touch ran", json{{"approvalPolicy", "never"}});
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  client->start_turn(thread, "run: touch again");
  EXPECT_EQ(command_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  EXPECT_EQ(client->close_and_wait(), 0);
  EXPECT_TRUE(file_exists(dir + "/again"));
}

}  // namespace
}  // namespace parley::test
