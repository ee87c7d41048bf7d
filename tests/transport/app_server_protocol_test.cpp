// The JSON-RPC surface of the real binary: handshake, errors as Codex gives
// them, message order, and a stdout that carries nothing but protocol.

#include <gtest/gtest.h>
#include <thread>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

int error_code(const json& r) { return r.contains("error") ? r["error"]["code"].get<int>() : 0; }
TEST(app_server_protocol, requests_before_initialize_are_refused) {
  app_server_client c;
  auto r = c.call("thread/loaded/list", json::object());
  EXPECT_EQ(error_code(r), -32600);
  EXPECT_EQ(error_message(r), "Not initialized");
  c.initialize();
  EXPECT_TRUE(c.call("thread/loaded/list", json::object()).contains("result"));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, initialize_echoes_string_ids_and_refuses_a_second_time) {
  app_server_client c;
  c.send_raw(R"({"id":"a","method":"initialize","params":{"clientInfo":{"name":"x","version":"1"}}})");
  auto r = c.next();
  EXPECT_EQ(r["id"], "a");
  for (auto key : {"userAgent", "codexHome", "platformFamily", "platformOs"})
    EXPECT_TRUE(r["result"].contains(key)) << key;
  auto again = c.call("initialize", json{{"clientInfo", {{"name", "x"}, {"version", "1"}}}});
  EXPECT_EQ(error_message(again), "Already initialized");
  EXPECT_EQ(c.close_and_wait(), 0);
  for (auto& m : c.log()) EXPECT_FALSE(m.contains("jsonrpc"));
}

TEST(app_server_protocol, bad_initialize_params_leave_the_connection_uninitialized) {
  app_server_client c;
  auto r = c.call("initialize", json{{"clientInfo", {{"version", "1"}}}});
  EXPECT_EQ(error_code(r), -32600);
  EXPECT_EQ(error_message(r), "Invalid request: missing field `name`");
  c.initialize();  // a later valid initialize succeeds
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, garbage_lines_get_no_reply_and_the_server_keeps_serving) {
  app_server_client c;
  c.send_raw("garbage");
  c.send_raw(R"([{"id":1,"method":"initialize"}])");
  c.send_raw(R"({"id":null,"method":"initialize","params":{}})");
  c.send_raw(R"({"id":1.5,"method":"initialize","params":{}})");
  c.send_raw(R"({"id":7})");
  c.initialize();
  EXPECT_EQ(c.close_and_wait(), 0);
  // Only the initialize response came back.
  int responses = 0;
  for (auto& m : c.log()) responses += m.contains("id") && !m.contains("method");
  EXPECT_EQ(responses, 1);
}

TEST(app_server_protocol, errors_for_bad_requests) {
  app_server_client c;
  c.initialize();
  auto unknown = c.call("nope/nope", json::object());
  EXPECT_EQ(error_code(unknown), -32601);  // "not supported": clients go on without it
  EXPECT_NE(error_message(unknown).find("`nope/nope`"), std::string::npos);

  auto no_params = json{{"id", 99}, {"method", "thread/loaded/list"}};
  c.send_raw(no_params.dump());
  auto r = c.wait_for([](const json& m) { return m.value("id", json()) == 99; });
  EXPECT_EQ(error_message(r), "Invalid request: missing field `params`");

  EXPECT_EQ(error_message(c.call("thread/read", json::object())),
            "Invalid request: missing field `threadId`");
  EXPECT_EQ(error_message(c.call("turn/start", json{{"threadId", "x"}, {"input", "hi"}})),
            "Invalid request: invalid type: string \"hi\", expected a sequence");
  EXPECT_EQ(error_message(c.call("thread/start", json{{"approvalPolicy", "bogus"}})),
            "Invalid request: unknown variant `bogus`, expected one of `untrusted`, "
            "`on-request`, `granular`, `never`");
  EXPECT_EQ(error_message(c.call("thread/start", json{{"sandbox", 3}})),
            "Invalid request: invalid type: integer `3`, expected a string");
  EXPECT_EQ(error_message(c.call("thread/read", json{{"threadId", "None"}})),
            "invalid thread id: None");
  const std::string ghost = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80";
  EXPECT_EQ(error_message(c.call("thread/read", json{{"threadId", ghost}})),
            "thread not loaded: " + ghost);
  EXPECT_EQ(error_message(c.call("turn/start",
                                 json{{"threadId", ghost}, {"input", json::array()}})),
            "thread not found: " + ghost);
  EXPECT_EQ(error_message(c.call("turn/interrupt", json{{"threadId", ghost}, {"turnId", "t"}})),
            "thread not found: " + ghost);
  EXPECT_EQ(error_message(c.call("thread/start", json{{"cwd", "/definitely/not/here"}})),
            "cwd is not a directory: /definitely/not/here");

  auto thread = c.start_thread();
  EXPECT_EQ(error_message(c.call("turn/interrupt", json{{"threadId", thread}, {"turnId", "t"}})),
            "no active turn to interrupt");
  auto turn = c.start_turn(thread, "run[escalate]: sleep 30");
  c.wait_for_method("item/commandExecution/requestApproval");
  EXPECT_EQ(error_message(c.call("turn/interrupt", json{{"threadId", thread}, {"turnId", "t"}})),
            "expected active turn id t but found " + turn);
  // A second turn/start while active returns the active turn, no new turn/started.
  auto again = c.call_ok("turn/start", json{{"threadId", thread}, {"input", json::array()}});
  EXPECT_EQ(again["turn"]["id"], turn);
  EXPECT_EQ(c.close_and_wait(), 0);
  int started = 0;
  for (auto& m : c.log()) started += method_of(m) == "turn/started";
  EXPECT_EQ(started, 1);
}

TEST(app_server_protocol, replies_to_unknown_request_ids_are_ignored) {
  app_server_client c;
  c.initialize();
  c.respond(12345, json{{"decision", "accept"}});
  c.respond("foreign", json{{"decision", "accept"}});
  c.respond_error(777, -1, "x");
  EXPECT_TRUE(c.call("thread/loaded/list", json::object()).contains("result"));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, bootstrap_methods_answer_minimally) {
  app_server_client c;
  c.initialize();
  EXPECT_EQ(c.call_ok("account/read", json::object()),
            (json{{"account", nullptr}, {"requiresOpenaiAuth", false}}));
  auto models = c.call_ok("model/list", json{{"includeHidden", true}});
  ASSERT_EQ(models["data"].size(), 1u);
  EXPECT_TRUE(models["data"][0]["isDefault"].get<bool>());
  EXPECT_EQ(c.call_ok("config/read", json{{"includeLayers", true}}),
            (json{{"config", json::object()}, {"origins", json::object()}}));
  c.send_raw(R"({"id":"req","method":"configRequirements/read"})");
  auto req = c.wait_for([](const json& m) { return m.value("id", json()) == "req"; });
  EXPECT_EQ(req["result"], (json{{"requirements", nullptr}}));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, thread_start_then_thread_started) {
  app_server_client c;
  c.initialize();
  auto r = c.call_ok("thread/start", json::object());
  auto& t = r["thread"];
  EXPECT_EQ(t["status"], (json{{"type", "idle"}}));
  EXPECT_EQ(t["turns"], json::array());
  EXPECT_EQ(t["ephemeral"], false);
  for (auto key : {"model", "modelProvider", "cwd", "approvalPolicy", "approvalsReviewer", "sandbox"})
    EXPECT_TRUE(r.contains(key)) << key;
  auto started = c.next();
  EXPECT_EQ(method_of(started), "thread/started");
  EXPECT_EQ(started["params"]["thread"]["id"], t["id"]);
  EXPECT_TRUE(started.contains("emittedAtMs"));
  auto loaded = c.call_ok("thread/loaded/list", json::object());
  EXPECT_EQ(loaded["data"], json::array({t["id"]}));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, a_say_turn_streams_deltas_in_codex_order) {
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread();
  auto turn = c.start_turn(thread, "say: one two three four five six seven");
  std::vector<std::string> methods;
  std::string text;
  for (;;) {
    auto m = c.next();
    methods.push_back(method_of(m));
    if (method_of(m) == "item/agentMessage/delta") text += m["params"]["delta"].get<std::string>();
    if (method_of(m) == "item/completed" && m["params"]["item"]["type"] == "agentMessage") {
      EXPECT_EQ(m["params"]["item"]["text"], text);
    }
    if (method_of(m) == "turn/completed") {
      EXPECT_EQ(m["params"]["turn"]["id"], turn);
      EXPECT_EQ(m["params"]["turn"]["status"], "completed");
      break;
    }
  }
  EXPECT_EQ(text, "one two three four five six seven");
  std::vector<std::string> expected = {
      "thread/status/changed", "turn/started", "item/started", "item/completed", "item/started",
      "item/agentMessage/delta", "item/agentMessage/delta", "item/agentMessage/delta",
      "item/completed", "thread/status/changed", "turn/completed"};
  EXPECT_EQ(methods, expected);
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, approval_flow_follows_codex_message_order) {
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread(json{{"approvalPolicy", "on-request"}});
  c.start_turn(thread, "run[escalate]: echo out; echo err >&2");
  std::vector<std::string> methods;
  json request;
  for (;;) {
    auto m = c.next();
    auto method = method_of(m);
    if (method == "item/commandExecution/outputDelta") {
      if (methods.back() != method) methods.push_back(method);  // one or more
    } else {
      methods.push_back(method);
    }
    if (method == "thread/status/changed") methods.back() += ":" + m["params"]["status"].dump();
    if (method == "item/commandExecution/requestApproval") {
      request = m;
      EXPECT_TRUE(m["params"].contains("startedAtMs"));
      c.answer(m, "accept");
    }
    if (method == "item/completed" && m["params"]["item"]["type"] == "commandExecution") {
      auto& item = m["params"]["item"];
      EXPECT_EQ(item["aggregatedOutput"], "out\nerr\n");
      EXPECT_EQ(item["exitCode"], 0);
      EXPECT_TRUE(item["durationMs"].is_number_integer());
      EXPECT_EQ(item["id"], request["params"]["itemId"]);
    }
    if (method == "turn/completed") break;
  }
  std::vector<std::string> expected = {
      R"(thread/status/changed:{"activeFlags":[],"type":"active"})",
      "turn/started", "item/started", "item/completed",
      R"(thread/status/changed:{"activeFlags":["waitingOnApproval"],"type":"active"})",
      "item/started", "item/commandExecution/requestApproval", "serverRequest/resolved",
      R"(thread/status/changed:{"activeFlags":[],"type":"active"})",
      "item/commandExecution/outputDelta", "item/completed",
      R"(thread/status/changed:{"type":"idle"})", "turn/completed"};
  EXPECT_EQ(methods, expected);
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, thread_read_includes_completed_turns) {
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread(json{{"approvalPolicy", "never"}});
  c.start_turn(thread, "run: echo hi\nsay: done");
  c.wait_for_method("turn/completed");
  auto r = c.call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
  auto& t = r["thread"];
  EXPECT_EQ(t["preview"], "run: echo hi\nsay: done");
  ASSERT_EQ(t["turns"].size(), 1u);
  auto& items = t["turns"][0]["items"];
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]["type"], "userMessage");
  EXPECT_EQ(items[1]["type"], "commandExecution");
  EXPECT_EQ(items[1]["aggregatedOutput"], "hi\n");
  EXPECT_EQ(items[2]["text"], "done");
  EXPECT_EQ(t["turns"][0]["status"], "completed");
  auto without = c.call_ok("thread/read", json{{"threadId", thread}});
  EXPECT_EQ(without["thread"]["turns"], json::array());
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, opted_out_notifications_are_not_sent) {
  app_server_client c;
  c.initialize(json{{"optOutNotificationMethods", {"item/agentMessage/delta", "thread/started"}}});
  auto thread = c.call_ok("thread/start", json::object())["thread"]["id"].get<std::string>();
  c.start_turn(thread, "say: quiet please");
  c.wait_for_method("turn/completed");
  EXPECT_EQ(c.close_and_wait(), 0);
  for (auto& m : c.log()) {
    EXPECT_NE(method_of(m), "item/agentMessage/delta");
    EXPECT_NE(method_of(m), "thread/started");
  }
}

TEST(app_server_protocol, nothing_stays_registered_after_turns_end) {
  app_server_client c{{"--approval-timeout=200ms"}};
  c.initialize();
  auto thread = c.start_thread();
  // accept, decline, timeout, interrupt: every way an approval can end
  c.start_turn(thread, "run[escalate]: true\nrun[escalate]: true\nrun[escalate]: true");
  c.answer(c.wait_for_method("item/commandExecution/requestApproval"), "accept");
  c.answer(c.wait_for_method("item/commandExecution/requestApproval"), "decline");
  c.wait_for_method("item/commandExecution/requestApproval");  // left to time out
  c.wait_for_method("turn/completed");
  auto turn = c.start_turn(thread, "run[escalate]: sleep 20");
  c.wait_for_method("item/commandExecution/requestApproval");
  c.call_ok("turn/interrupt", json{{"threadId", thread}, {"turnId", turn}});
  c.wait_for_method("turn/completed");
  auto turn2 = c.start_turn(thread, "run: sleep 20", json{{"approvalPolicy", "never"}});
  c.wait_for_method("item/started");
  c.wait_for([](const json& m) { return method_of(m) == "item/started" && m["params"]["item"]["type"] == "commandExecution"; });
  c.call_ok("turn/interrupt", json{{"threadId", thread}, {"turnId", turn2}});
  auto done = c.wait_for_method("turn/completed");
  EXPECT_EQ(done["params"]["turn"]["status"], "interrupted");
  // Actor states are released right after their last message: poll briefly.
  json counts;
  for (int i = 0; i < 50; ++i) {
    counts = c.call_ok("parley/debug/counts");
    if (counts["turns"] == 0 && counts["approvals"] == 0 && counts["execs"] == 0
        && counts["processes"] == 0)
      break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(counts["turns"], 0) << counts;
  EXPECT_EQ(counts["approvals"], 0) << counts;
  EXPECT_EQ(counts["execs"], 0) << counts;
  EXPECT_EQ(counts["processes"], 0) << counts;
  EXPECT_EQ(counts["pendingAsks"], 0) << counts;
  EXPECT_EQ(counts["pendingRequests"], 0) << counts;
  EXPECT_EQ(counts["conversations"], 1) << counts;
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, interrupt_kills_the_whole_process_group) {
  auto dir = make_temp_dir("interrupt_kills");
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread(json{{"approvalPolicy", "never"}, {"cwd", dir}});
  // A background child that would create the file after 1.5 s if it survived.
  auto turn = c.start_turn(thread, "run: (sleep 1.5; touch survived) & sleep 30");
  c.wait_for([](const json& m) { return method_of(m) == "item/started" && m["params"]["item"]["type"] == "commandExecution"; });
  std::this_thread::sleep_for(200ms);
  c.call_ok("turn/interrupt", json{{"threadId", thread}, {"turnId", turn}});
  auto item = c.wait_for([](const json& m) { return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "commandExecution"; });
  EXPECT_EQ(item["params"]["item"]["status"], "failed");
  EXPECT_EQ(c.wait_for_method("turn/completed")["params"]["turn"]["status"], "interrupted");
  std::this_thread::sleep_for(2s);
  EXPECT_FALSE(file_exists(dir + "/survived"));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, command_output_is_capped) {
  app_server_client c{{"--output-cap=1000"}};
  c.initialize();
  auto thread = c.start_thread(json{{"approvalPolicy", "never"}});
  c.start_turn(thread, "run: head -c 5000 /dev/zero | tr '\\0' x");
  auto item = c.wait_for([](const json& m) { return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "commandExecution"; });
  auto out = item["params"]["item"]["aggregatedOutput"].get<std::string>();
  EXPECT_EQ(out.substr(0, 1000), std::string(1000, 'x'));
  EXPECT_NE(out.find("output truncated, 4000 more bytes dropped"), std::string::npos) << out;
  std::string streamed;
  for (auto& m : c.log())
    if (method_of(m) == "item/commandExecution/outputDelta") streamed += m["params"]["delta"];
  EXPECT_EQ(streamed, std::string(1000, 'x'));
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(app_server_protocol, stdout_carries_only_protocol_lines) {
  // A whole session, with every kind of bad input and every approval outcome;
  // then every line the server printed must be one well-formed message.
  app_server_client c{{"--approval-timeout=300ms", "--log-level=trace"}};
  c.send_raw("not json at all");
  c.call("thread/start", json::object());  // not initialized
  c.initialize();
  c.send_raw("{\"id\":");  // truncated
  c.call("nope", json::object());
  auto thread = c.start_thread();
  c.start_turn(thread, "say: hi\nrun[escalate]: echo a\nrun[escalate]: echo b\nrun[escalate]: echo c\nrun[escalate]: echo d");
  c.answer(c.wait_for_method("item/commandExecution/requestApproval"), "accept");
  c.answer(c.wait_for_method("item/commandExecution/requestApproval"), "decline");
  c.respond_error(c.wait_for_method("item/commandExecution/requestApproval")["id"], 1, "no");
  c.wait_for_method("item/commandExecution/requestApproval");  // times out
  c.wait_for_method("turn/completed");
  c.respond(999, json{{"decision", "accept"}});
  c.start_turn(thread, "run[escalate]: sleep 10");
  c.wait_for_method("item/commandExecution/requestApproval");
  EXPECT_EQ(c.close_and_wait(), 0);
  EXPECT_TRUE(c.bad_lines().empty());
  ASSERT_GT(c.log().size(), 30u);
  for (auto& m : c.log()) {
    bool request = m.contains("id") && m.contains("method");
    bool notification = !m.contains("id") && m.contains("method");
    bool response = m.contains("id") && !m.contains("method")
                    && (m.contains("result") != m.contains("error"));
    EXPECT_TRUE(request || notification || response) << m;
    EXPECT_FALSE(m.contains("jsonrpc")) << m;
    if (notification) {
      EXPECT_TRUE(m["params"].is_object()) << m;
      EXPECT_TRUE(m["emittedAtMs"].is_number_integer()) << m;
    }
    if (request) {
      EXPECT_TRUE(m["id"].is_number_integer()) << m;
    }
  }
}

}  // namespace
}  // namespace parley::test
