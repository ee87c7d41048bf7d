// A rollout whose last line was cut short (a crash or a full disk mid-write)
// must not swallow the next turn: the torn line is dropped before anything
// is appended, and a later process reads every turn as it happened.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<app_server_client> server(const std::string& home) {
  auto c = std::make_unique<app_server_client>(std::vector<std::string>{"--store=local", "--home=" + home});
  c->initialize();
  return c;
}

TEST(torn_rollout, a_new_turn_after_a_torn_tail_is_read_back_whole) {
  auto dir = make_temp_dir("torn_rollout");
  auto home = dir + "/home";
  std::string thread;
  {
    auto c = server(home);
    thread = c->start_thread(json{{"approvalPolicy", "never"}, {"cwd", dir}});
    // Killed once the second command runs (its start is stored by then).
    auto marker = dir + "/running";
    c->start_turn(thread, "run: echo first\nrun: touch " + marker + "; sleep 30");
    for (int i = 0; i < 400 && !std::filesystem::exists(marker); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ASSERT_TRUE(std::filesystem::exists(marker));
    c->process().signal(SIGKILL);
    EXPECT_EQ(c->process().wait(), 128 + 9);
  }
  auto files = rollouts(home);
  ASSERT_EQ(files.size(), 1u);
  std::ofstream{files[0], std::ios::app} << R"({"timestamp":"2026-11-21T08:00:00.000Z","type":"event_m)";
  {
    auto c = server(home);
    c->call_ok("thread/resume", json{{"threadId", thread}, {"approvalPolicy", "never"}});
    // The killed turn goes on first (its started command ends failed).
    for (int i = 0; i < 200; ++i) {
      auto r = c->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
      if (r["thread"]["turns"][0]["status"] != "inProgress") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    auto back = c->start_turn(thread, "say: back");
    auto done = c->wait_for([&](const json& m) {
      return method_of(m) == "turn/completed" && m["params"]["turn"]["id"] == back;
    });
    EXPECT_EQ(done["params"]["turn"]["status"], "completed");
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  // Every line on disk is whole again.
  std::ifstream in{files[0]};
  for (std::string line; std::getline(in, line);)
    EXPECT_FALSE(json::parse(line, nullptr, false).is_discarded()) << line;

  auto c = server(home);
  auto read = c->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
  auto& turns = read["thread"]["turns"];
  ASSERT_EQ(turns.size(), 2u) << read.dump();
  // The killed turn went on after the restart: its started command ended
  // failed (never run again), and then the turn itself.
  EXPECT_EQ(turns[0]["status"], "completed");
  EXPECT_EQ(turns[0]["items"][1]["aggregatedOutput"], "first\n");
  EXPECT_EQ(turns[0]["items"][2]["status"], "failed");
  EXPECT_EQ(turns[1]["status"], "completed");
  ASSERT_EQ(turns[1]["items"].size(), 2u);
  EXPECT_EQ(turns[1]["items"][1]["text"], "back");
  EXPECT_EQ(c->close_and_wait(), 0);
}

// Found by tests/fuzz/rollout_fuzzer: a field of an unexpected JSON type
// (`"message": 5`, `"cwd": []`) threw out of the reader and took the store's
// I/O actor down. Such fields are skipped, as Codex's reader does.
TEST(torn_rollout, fields_of_the_wrong_type_are_skipped_not_fatal) {
  auto dir = make_temp_dir("wrong_types");
  auto home = dir + "/home";
  const std::string id = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c81";
  write_file(home + "/sessions/2025/11/07/rollout-2025-11-07T07-20-00-" + id + ".jsonl",
             R"({"timestamp":"2025-11-07T07:20:00.100Z","type":"session_meta","payload":{"id":")" + id
                 + R"(","timestamp":5,"cwd":[],"cli_version":{},"model_provider":7}}
{"timestamp":1,"type":"event_msg","payload":{"type":"task_started","turn_id":3}}
{"timestamp":"2025-11-07T07:20:01.000Z","type":"event_msg","payload":{"type":"user_message","message":5}}
{"timestamp":"2025-11-07T07:20:01.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":1,"command":"x","parsed_cmd":[1,{"type":2}],"cwd":4}}}
{"timestamp":"2025-11-07T07:20:02.000Z","type":"event_msg","payload":{"type":"agent_message","message":"still read"}}
{"timestamp":"2025-11-07T07:20:03.000Z","type":"event_msg","payload":{"type":"task_complete"}}
)");
  auto c = server(home);
  auto read = c->call_ok("thread/read", json{{"threadId", id}, {"includeTurns", true}});
  auto& turns = read["thread"]["turns"];
  ASSERT_EQ(turns.size(), 1u) << read.dump();
  EXPECT_EQ(turns[0]["status"], "completed");
  EXPECT_EQ(turns[0]["items"].back()["text"], "still read") << read.dump();
  EXPECT_TRUE(c->call("thread/list")["result"]["data"].is_array());
  EXPECT_EQ(c->close_and_wait(), 0);
}

}  // namespace
}  // namespace parley::test
