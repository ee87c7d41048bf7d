// The approval pipeline through the real binary: rules in the home decide
// without asking, an execpolicy amendment is written to the rules file and
// honoured after a restart, legacy clients get v1 requests, replies bound to
// another thread or action are refused, and parley/stats counts it all.

#include <filesystem>
#include <csignal>
#include <gtest/gtest.h>
#include <thread>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

constexpr const char* v2_command = "item/commandExecution/requestApproval";

json command_completed(app_server_client& c) {
  return c.wait_for([](const json& m) {
    return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "commandExecution";
  });
}

bool waiting_status(const json& m) {
  return method_of(m) == "thread/status/changed"
         && m["params"]["status"].value("activeFlags", json::array()).size() > 0;
}

/// Whether the thread was ever shown waiting on an approval, and whether it
/// still was when its turn completed.
std::pair<bool, bool> waiting_shown_and_left(const app_server_client& c, const std::string& thread) {
  bool shown = false, still_waiting = false;
  for (auto& m : c.thread_log(thread)) {
    if (method_of(m) == "thread/status/changed") {
      still_waiting = waiting_status(m);
      shown = shown || still_waiting;
    }
    if (method_of(m) == "turn/completed") break;
  }
  return {shown, still_waiting};
}

size_t count_method(const app_server_client& c, const std::string& method) {
  size_t n = 0;
  for (auto& m : c.log()) n += method_of(m) == method ? 1 : 0;
  return n;
}

TEST(approval_pipeline, rules_in_the_home_decide_without_asking) {
  auto dir = make_temp_dir("rules_decide");
  write_file(dir + "/home/rules/default.rules",
             "prefix_rule(pattern=[\"touch\", \"forbidden\"], decision=\"forbidden\")\n"
             "prefix_rule(pattern=[\"touch\"], decision=\"allow\")\n");
  app_server_client client({"--home=" + dir + "/home"});
  client.initialize();
  auto thread = client.start_thread(json{{"cwd", dir}});
  client.start_turn(thread, "run[escalate]: touch allowed\nrun[escalate]: touch forbidden");
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "completed");
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "declined");
  client.wait_for_method("turn/completed");
  EXPECT_TRUE(file_exists(dir + "/allowed"));
  EXPECT_FALSE(file_exists(dir + "/forbidden"));
  EXPECT_EQ(waiting_shown_and_left(client, thread), std::make_pair(false, false))
      << "rules decide at once: the thread never waits on an approval";
  auto stats = client.call_ok("parley/stats")["approvals"];
  EXPECT_EQ(stats["decidedBy"]["rules"], 2);
  EXPECT_EQ(stats["pending"], 0);
  EXPECT_EQ(client.close_and_wait(), 0);
  EXPECT_EQ(count_method(client, v2_command), 0u);
  // The audit log names the stage.
  auto audit = read_file(dir + "/home/audit.jsonl");
  EXPECT_NE(audit.find("\"stage\":\"rules\""), std::string::npos);
}

TEST(approval_pipeline, an_amendment_is_written_to_the_rules_and_honoured_after_restart) {
  auto dir = make_temp_dir("amendment");
  auto home = dir + "/home";
  {
    app_server_client client({"--home=" + home});
    client.initialize();
    auto thread = client.start_thread(json{{"cwd", dir}});
    client.start_turn(thread, "run[escalate]: touch first");
    auto req = client.wait_for_method(v2_command);
    EXPECT_EQ(req["params"]["proposedExecpolicyAmendment"], (json{"touch", "first"}));
    client.respond(req["id"], json{{"decision",
                                    {{"acceptWithExecpolicyAmendment",
                                      {{"execpolicy_amendment", {"touch"}}}}}}});
    EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "completed");
    client.wait_for_method("turn/completed");
    EXPECT_EQ(client.close_and_wait(), 0);
  }
  auto rules = read_file(home + "/rules/default.rules");
  EXPECT_NE(rules.find("prefix_rule(pattern=[\"touch\"], decision=\"allow\")"), std::string::npos)
      << rules;
  // A new process, a new thread: the rule decides, nobody is asked.
  app_server_client client({"--home=" + home});
  client.initialize();
  auto thread = client.start_thread(json{{"cwd", dir}});
  client.start_turn(thread, "run[escalate]: touch second");
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "completed");
  client.wait_for_method("turn/completed");
  EXPECT_TRUE(file_exists(dir + "/second"));
  EXPECT_EQ(client.close_and_wait(), 0);
  EXPECT_EQ(count_method(client, v2_command), 0u);
}

TEST(approval_pipeline, a_rules_file_that_does_not_load_stops_the_start) {
  auto dir = make_temp_dir("broken_rules");
  write_file(dir + "/home/rules/default.rules", "prefix_rule(pattern=[\"git\"], decision=\"maybe\")\n");
  child_process server({parley_binary(), "app-server", "--home=" + dir + "/home"},
                       dir + "/stderr.txt");
  server.close_stdin();
  EXPECT_EQ(server.wait(), 1);
  auto err = read_file(dir + "/stderr.txt");
  EXPECT_NE(err.find("default.rules:1:"), std::string::npos) << err;
}

TEST(approval_pipeline, a_legacy_client_gets_v1_requests_with_v1_decisions) {
  auto dir = make_temp_dir("legacy");
  app_server_client client;
  client.initialize(json{{"legacyApprovals", true}});
  auto thread = client.start_thread(json{{"cwd", dir}});
  write_file(dir + "/edit.txt", "one\n");
  client.start_turn(thread,
                    "run[escalate]: touch approved\nrun[escalate]: touch denied\nrun[escalate]: touch garbage\n"
                    "patch:\n*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: edit.txt\n"
                    "@@\n-one\n+two\n*** End Patch");
  auto exec = client.wait_for_method("execCommandApproval");
  auto p = exec["params"];
  EXPECT_EQ(p["conversationId"], thread);
  EXPECT_TRUE(p["callId"].is_string());
  EXPECT_EQ(p["command"], (json{"/bin/sh", "-c", "touch approved"}));
  EXPECT_EQ(p["cwd"], dir);
  EXPECT_EQ(p["parsedCmd"][0]["type"], "unknown");
  EXPECT_EQ(p["parsedCmd"][0]["cmd"], "touch approved");
  client.respond(exec["id"], json{{"decision", "approved"}});
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "completed");
  client.respond(client.wait_for_method("execCommandApproval")["id"],
                 json{{"decision", {{"denied", {{"rejection", "not today"}}}}}});
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "declined");
  // Undecodable: v1 falls back to denied.
  client.respond(client.wait_for_method("execCommandApproval")["id"], json{{"decision", "maybe"}});
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "declined");
  auto patch = client.wait_for_method("applyPatchApproval");
  auto changes = patch["params"]["fileChanges"];
  EXPECT_EQ(patch["params"]["conversationId"], thread);
  EXPECT_EQ(changes[dir + "/new.txt"]["type"], "add");
  EXPECT_EQ(changes[dir + "/new.txt"]["content"], "x\n");
  EXPECT_EQ(changes[dir + "/edit.txt"]["type"], "update");
  EXPECT_NE(changes[dir + "/edit.txt"]["unified_diff"].get<std::string>().find("+two"),
            std::string::npos);
  client.respond(patch["id"], json{{"decision", "approved_for_session"}});
  client.wait_for_method("turn/completed");
  EXPECT_TRUE(file_exists(dir + "/approved"));
  EXPECT_FALSE(file_exists(dir + "/denied"));
  EXPECT_FALSE(file_exists(dir + "/garbage"));
  EXPECT_EQ(read_file(dir + "/edit.txt"), "two\n");
  EXPECT_EQ(client.close_and_wait(), 0);
  EXPECT_EQ(count_method(client, v2_command), 0u);
  EXPECT_EQ(count_method(client, "item/fileChange/requestApproval"), 0u);
}

TEST(approval_pipeline, a_v2_client_gets_v2_requests) {
  auto dir = make_temp_dir("v2_only");
  app_server_client client;
  client.initialize();
  auto thread = client.start_thread(json{{"cwd", dir}});
  client.start_turn(thread, "run[escalate]: touch x");
  client.answer(client.wait_for_method(v2_command), "decline");
  client.wait_for_method("turn/completed");
  EXPECT_EQ(client.close_and_wait(), 0);
  EXPECT_EQ(count_method(client, "execCommandApproval"), 0u);
}

TEST(approval_pipeline, a_reply_bound_to_another_thread_or_action_is_refused) {
  auto dir = make_temp_dir("bound");
  app_server_client client;
  client.initialize();
  auto a = client.start_thread(json{{"cwd", dir}});
  auto b = client.start_thread(json{{"cwd", dir}});
  client.start_turn(a, "run[escalate]: touch from_a");
  auto req_a = client.wait_for_method(v2_command);
  client.start_turn(b, "run[escalate]: touch from_b");
  auto req_b = client.wait_for([&](const json& m) {
    return method_of(m) == v2_command && m["params"]["threadId"] == b;
  });
  ASSERT_EQ(req_a["params"]["threadId"], a);
  EXPECT_TRUE(req_a["params"]["actionDigest"].is_string());
  auto before = client.call_ok("parley/stats")["approvals"]["refusedReplies"].get<int64_t>();

  // An accept for thread B's approval, sent with A's request id: refused.
  client.respond(req_a["id"], json{{"decision", "accept"}, {"threadId", b}});
  // An accept for another action (digest of B's command) on A's request: refused.
  client.respond(req_a["id"],
                 json{{"decision", "accept"}, {"actionDigest", req_b["params"]["actionDigest"]}});
  // A reply to a request id nobody sent: ignored.
  client.respond(json(987654), json{{"decision", "accept"}});
  auto resolved_a = [&](const json& m) {
    return method_of(m) == "serverRequest/resolved" && m["params"]["requestId"] == req_a["id"];
  };
  EXPECT_FALSE(client.arrives(resolved_a, 300ms)) << "a refused reply resolved the request";
  EXPECT_FALSE(file_exists(dir + "/from_a"));
  auto stats = client.call_ok("parley/stats")["approvals"];
  EXPECT_EQ(stats["refusedReplies"].get<int64_t>() - before, 3);
  EXPECT_EQ(stats["pending"], 2);

  // The right answers, bound correctly, are applied.
  client.respond(req_a["id"], json{{"decision", "decline"},
                                   {"threadId", a},
                                   {"itemId", req_a["params"]["itemId"]},
                                   {"actionDigest", req_a["params"]["actionDigest"]}});
  client.wait_for(resolved_a);
  client.answer(req_b, "accept");
  client.wait_for([&](const json& m) { return method_of(m) == "turn/completed" && thread_of(m) == a; });
  client.wait_for([&](const json& m) { return method_of(m) == "turn/completed" && thread_of(m) == b; });
  EXPECT_FALSE(file_exists(dir + "/from_a"));
  EXPECT_TRUE(file_exists(dir + "/from_b"));
  stats = client.call_ok("parley/stats")["approvals"];
  EXPECT_EQ(stats["pending"], 0);
  EXPECT_GE(stats["decidedBy"]["client"], 2);
  EXPECT_GT(stats["timeToDecisionMs"]["p99"].get<double>(), 0.0);
  EXPECT_EQ(client.close_and_wait(), 0);
}

/// A home whose hooks.json runs `script` (a /bin/sh body) as hook "ext".
std::string home_with_hook(const std::string& dir, const std::string& script, int timeout_ms) {
  auto home = dir + "/home";
  write_file(dir + "/hook.sh", "#!/bin/sh\n" + script);
  std::filesystem::permissions(dir + "/hook.sh", std::filesystem::perms::owner_all);
  write_file(home + "/hooks.json",
             json{{"hooks",
                   {{{"name", "ext"}, {"command", {dir + "/hook.sh"}}, {"timeoutMs", timeout_ms}}}}}
                 .dump());
  return home;
}

TEST(approval_pipeline, an_external_hook_program_allows_after_reading_the_request) {
  auto dir = make_temp_dir("ext_allow");
  auto home = home_with_hook(
      dir, "cat > \"$(dirname \"$0\")/request.json\"\necho '{\"decision\":\"allow\"}'\n", 5000);
  app_server_client client({"--home=" + home});
  client.initialize();
  auto thread = client.start_thread(json{{"cwd", dir}});
  client.start_turn(thread, "run[escalate]: touch by_program");
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "completed");
  client.wait_for_method("turn/completed");
  EXPECT_TRUE(file_exists(dir + "/by_program"));
  EXPECT_EQ(waiting_shown_and_left(client, thread), std::make_pair(true, false))
      << "the thread waits while the program decides, and not after";
  auto request = json::parse(read_file(dir + "/request.json"));
  EXPECT_EQ(request["type"], "command");
  EXPECT_EQ(request["threadId"], thread);
  EXPECT_EQ(request["command"], "touch by_program");
  EXPECT_EQ(request["argv"], (json{"touch", "by_program"}));
  EXPECT_EQ(request["cwd"], dir);
  EXPECT_EQ(request["actionDigest"].get<std::string>().rfind("sha256:", 0), 0u);
  EXPECT_EQ(client.close_and_wait(), 0);
  EXPECT_EQ(count_method(client, v2_command), 0u);
}

TEST(approval_pipeline, an_external_hook_that_sleeps_past_its_deadline_denies) {
  auto dir = make_temp_dir("ext_sleep");
  auto home = home_with_hook(dir, "echo $$ > \"$(dirname \"$0\")/pid\"\nexec sleep 30\n", 300);
  app_server_client client({"--home=" + home});
  client.initialize();
  auto thread = client.start_thread(json{{"cwd", dir}});
  auto started = std::chrono::steady_clock::now();
  client.start_turn(thread, "run[escalate]: touch too_slow");
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "declined");
  client.wait_for_method("turn/completed");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s) << "waited for the sleeping hook";
  EXPECT_FALSE(file_exists(dir + "/too_slow"));
  EXPECT_EQ(count_method(client, v2_command), 0u) << "a hook's deny is final: nobody else is asked";
  // The program was killed, not left sleeping.
  auto pid = std::stoi(read_file(dir + "/pid"));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(pid, 0) != 0;
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone);
  EXPECT_EQ(client.close_and_wait(), 0);
  auto audit = read_file(home + "/audit.jsonl");
  EXPECT_NE(audit.find("approval timeout"), std::string::npos);
  EXPECT_NE(audit.find("\"stage\":\"hook:ext\""), std::string::npos);
}

TEST(approval_pipeline, an_external_hook_that_fails_denies_and_one_that_abstains_passes_on) {
  auto dir = make_temp_dir("ext_fail");
  // Abstains for `touch asked`, exits 3 for anything else.
  auto home = home_with_hook(dir,
                             "if grep -q asked; then echo '{\"decision\":\"abstain\"}'; "
                             "else exit 3; fi\n",
                             5000);
  app_server_client client({"--home=" + home});
  client.initialize();
  auto thread = client.start_thread(json{{"cwd", dir}});
  client.start_turn(thread, "run[escalate]: touch crashed\nrun[escalate]: touch asked");
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "declined");
  client.answer(client.wait_for_method(v2_command), "accept");
  EXPECT_EQ(command_completed(client)["params"]["item"]["status"], "completed");
  client.wait_for_method("turn/completed");
  EXPECT_FALSE(file_exists(dir + "/crashed"));
  EXPECT_TRUE(file_exists(dir + "/asked"));
  EXPECT_EQ(client.close_and_wait(), 0);
}

TEST(approval_pipeline, a_hooks_file_that_does_not_load_stops_the_start) {
  auto dir = make_temp_dir("broken_hooks");
  write_file(dir + "/home/hooks.json", "{\"hooks\": [{\"name\": \"x\"}]}");
  child_process server({parley_binary(), "app-server", "--home=" + dir + "/home"},
                       dir + "/stderr.txt");
  server.close_stdin();
  EXPECT_EQ(server.wait(), 1);
  EXPECT_NE(read_file(dir + "/stderr.txt").find("hooks.json"), std::string::npos);
}

}  // namespace
}  // namespace parley::test
