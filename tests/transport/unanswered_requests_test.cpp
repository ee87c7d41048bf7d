// Every request gets exactly one reply, also when the thread it addresses
// unloads meanwhile (archive, idle unload) or the input closes while it is in
// flight. Each test is one cause the stdio fuzzer (tests/fuzz) found.

#include <gtest/gtest.h>

#include <map>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

bool is_reply_to(const json& m, int64_t id) {
  return !m.contains("method") && m.contains("id") && m["id"] == id;
}

json reply_to(app_server_client& c, int64_t id) {
  return c.wait_for([id](const json& m) { return is_reply_to(m, id); });
}

/// How many replies each of `ids` got in everything read so far.
std::map<int64_t, int> reply_counts(const app_server_client& c, const std::vector<int64_t>& ids) {
  std::map<int64_t, int> n;
  for (auto id : ids) n[id] = 0;
  for (auto& m : c.log())
    if (!m.contains("method") && m.contains("id") && m["id"].is_number_integer()) {
      auto i = n.find(m["id"].get<int64_t>());
      if (i != n.end()) ++i->second;
    }
  return n;
}

class unanswered_requests : public ::testing::TestWithParam<const char*> {
 protected:
  std::unique_ptr<app_server_client> server(std::vector<std::string> extra = {}) {
    dir = make_temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    extra.push_back(std::string{"--store="} + GetParam());
    auto c = std::make_unique<app_server_client>(extra);
    c->initialize();
    return c;
  }
  std::string start_thread(app_server_client& c) {
    return c.start_thread(json{{"approvalPolicy", "never"}, {"cwd", dir}});
  }
  std::string dir;
};

// Cause 1: archiving a thread that has nothing stored yet unloaded it first
// and then failed; the thread was gone, and a read waiting on the store in
// the unloading conversation was never answered.
TEST_P(unanswered_requests, a_failed_archive_leaves_a_fresh_thread_loaded) {
  auto c = server();
  auto thread = start_thread(*c);
  auto read = c->send("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
  auto archive = c->send("thread/archive", json{{"threadId", thread}});
  auto read_reply = reply_to(*c, read);
  ASSERT_TRUE(read_reply.contains("result")) << read_reply.dump();
  EXPECT_EQ(read_reply["result"]["thread"]["id"], thread);
  EXPECT_EQ(read_reply["result"]["thread"]["turns"], json::array());
  EXPECT_EQ(error_message(reply_to(*c, archive)), "no rollout found for thread id " + thread);

  EXPECT_EQ(c->call_ok("thread/loaded/list")["data"], json::array({thread}));
  c->start_turn(thread, "say: still here");
  EXPECT_EQ(c->wait_for_method("turn/completed")["params"]["turn"]["status"], "completed");
  EXPECT_EQ(c->close_and_wait(), 0);
}

// Cause 2: a second shutdown of a conversation that was already unloading
// (two archives at once) was never answered, so the second archive hung.
TEST_P(unanswered_requests, archiving_twice_at_once_answers_both) {
  auto c = server();
  auto thread = start_thread(*c);
  c->start_turn(thread, "say: something to archive");
  c->wait_for_method("turn/completed");
  auto first = c->send("thread/archive", json{{"threadId", thread}});
  auto second = c->send("thread/archive", json{{"threadId", thread}});
  auto a = reply_to(*c, first);
  auto b = reply_to(*c, second);
  EXPECT_EQ(a["result"], json::object()) << a.dump();
  // Already archived, or moving (the local store may not find the file in
  // between): an error either way.
  EXPECT_EQ(b["error"]["code"], -32600) << b.dump();
  EXPECT_EQ(c->close_and_wait(), 0);
}

// Cause 3: reads and resumes that wait on the store inside a conversation
// that unloads when idle were dropped with it (CAF 0.17 drops an undelivered
// promise silently), and requests that reached it late got CAF's internal
// "request_receiver_down".
TEST_P(unanswered_requests, requests_racing_an_idle_unload_are_answered) {
  auto c = server({"--idle-unload=1ms"});
  std::vector<std::string> threads;
  for (int i = 0; i < 10; ++i) {
    threads.push_back(start_thread(*c));
    c->start_turn(threads.back(), "say: turn " + std::to_string(i));
  }
  for (size_t done = 0; done < threads.size(); ++done) c->wait_for_method("turn/completed");
  std::vector<int64_t> ids;
  for (int round = 0; round < 5; ++round)
    for (auto& t : threads) {
      ids.push_back(c->send("thread/unsubscribe", json{{"threadId", t}}));
      ids.push_back(c->send("thread/read", json{{"threadId", t}, {"includeTurns", true}}));
      ids.push_back(c->send("thread/resume", json{{"threadId", t}}));
      ids.push_back(c->send("thread/name/set", json{{"threadId", t}, {"name", "n"}}));
    }
  for (auto id : ids) {
    auto r = reply_to(*c, id);
    EXPECT_EQ(r.dump().find("request_receiver_down"), std::string::npos) << r.dump();
  }
  EXPECT_EQ(c->close_and_wait(), 0);
  for (auto [id, n] : reply_counts(*c, ids)) EXPECT_EQ(n, 1) << "request " << id;
}

// Cause 4: at end of input the thread manager quit while replies it owed
// (waiting on the store) were still on their way, and they were lost.
TEST_P(unanswered_requests, requests_in_flight_when_input_closes_are_answered) {
  auto c = server();
  auto thread = start_thread(*c);
  c->start_turn(thread, "say: stored");
  c->wait_for_method("turn/completed");
  std::vector<int64_t> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(c->send("thread/list", json::object()));
    ids.push_back(c->send("thread/read", json{{"threadId", thread}, {"includeTurns", true}}));
  }
  ids.push_back(c->send("thread/archive", json{{"threadId", thread}}));
  EXPECT_EQ(c->close_and_wait(), 0);
  for (auto [id, n] : reply_counts(*c, ids)) EXPECT_EQ(n, 1) << "request " << id;
}

INSTANTIATE_TEST_SUITE_P(stores, unanswered_requests, ::testing::Values("memory", "local"));

}  // namespace
}  // namespace parley::test
