// The durable store through the real binary: restart (clean and kill -9),
// resume, fork, list, read, archive, names, path validation, Codex files.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

namespace fs = std::filesystem;

json turn_done(app_server_client& c) { return c.wait_for_method("turn/completed"); }

/// Waits until the index has read what is on disk (lists do not wait for it:
/// they answer from what is indexed so far); the catch-up's figures.
json index_caught_up(app_server_client& c) {
  for (int i = 0; i < 1000; ++i) {
    auto index = c.call_ok("parley/stats")["store"]["index"];
    if (index["state"] == "ready") return index;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return json{};
}

class thread_store : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = make_temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    home = dir + "/home";
  }

  std::unique_ptr<app_server_client> server(std::vector<std::string> extra = {},
                                            json capabilities = json::object()) {
    extra.push_back("--home=" + home);
    auto c = std::make_unique<app_server_client>(extra);
    c->initialize(capabilities);
    return c;
  }

  std::string start_thread(app_server_client& c, const std::string& policy = "never") {
    return c.start_thread(json{{"approvalPolicy", policy}, {"cwd", dir}});
  }

  std::string dir;
  std::string home;
};

TEST_F(thread_store, kill_9_loses_nothing_reported_completed) {
  std::string thread;
  {
    auto c = server();
    thread = start_thread(*c);
    // Killed once the second command runs (its start is stored before it
    // is spawned, so the marker proves the record is on disk).
    // Beside the home: the home itself is out of every command's reach.
    auto marker = std::filesystem::path(home).parent_path().string() + "/running";
    c->start_turn(thread, "run: echo first\nrun: touch " + marker + "; sleep 30");
    c->wait_for([](const json& m) {
      return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "commandExecution";
    });
    for (int i = 0; i < 400 && !std::filesystem::exists(marker); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ASSERT_TRUE(std::filesystem::exists(marker));
    c->process().signal(SIGKILL);
    EXPECT_EQ(c->process().wait(), 128 + 9);
  }
  // The crash also tore the line being written.
  auto files = rollouts(home);
  ASSERT_EQ(files.size(), 1u);
  std::ofstream{files[0], std::ios::app} << R"({"timestamp":"2026-11-21T08:00:00.000Z","type":"event_m)";

  // The command had started: the restart never runs it again. Its item ends
  // failed, saying why, and the turn goes on (here to its end) by itself.
  auto c = server();
  json read;
  for (int i = 0; i < 200; ++i) {
    read = c->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
    if (read["thread"]["turns"][0]["status"] != "inProgress") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto& turns = read["thread"]["turns"];
  ASSERT_EQ(turns.size(), 1u);
  auto shown = read.dump() + "\nthe rollout:\n" + read_file(files[0]);
  EXPECT_EQ(turns[0]["status"], "completed") << shown;
  ASSERT_EQ(turns[0]["items"].size(), 3u) << shown;
  EXPECT_EQ(turns[0]["items"][1]["aggregatedOutput"], "first\n");
  EXPECT_EQ(turns[0]["items"][2]["status"], "failed");
  EXPECT_THAT(turns[0]["items"][2]["aggregatedOutput"].get<std::string>(),
              ::testing::HasSubstr("parley stopped while this ran; it was not run again"));
  c->call_ok("thread/resume", json{{"threadId", thread}, {"approvalPolicy", "never"}});
  c->start_turn(thread, "say: back");
  EXPECT_EQ(turn_done(*c)["params"]["turn"]["status"], "completed");
  EXPECT_EQ(c->close_and_wait(), 0);
}

TEST_F(thread_store, ephemeral_forks_are_not_listed_nor_resumable_after_restart) {
  std::string fork_id;
  {
    auto c = server({}, json{{"experimentalApi", true}});
    auto thread = start_thread(*c);
    c->start_turn(thread, "say: persisted");
    turn_done(*c);
    auto fork = c->call_ok("thread/fork",
                           json{{"threadId", thread}, {"ephemeral", true}, {"excludeTurns", true}});
    fork_id = fork["thread"]["id"];
    EXPECT_EQ(fork["thread"]["ephemeral"], true);
    EXPECT_TRUE(fork["thread"]["path"].is_null());
    EXPECT_EQ(fork["thread"]["forkedFromId"], thread);
    c->start_turn(fork_id, "say: side chat");
    turn_done(*c);
    auto list = c->call_ok("thread/list", json::object());
    ASSERT_EQ(list["data"].size(), 1u);
    EXPECT_EQ(list["data"][0]["id"], thread);
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto c = server({}, json{{"experimentalApi", true}});
  EXPECT_EQ(error_message(c->call("thread/resume", json{{"threadId", fork_id}})),
            "no rollout found for thread id " + fork_id);
  auto by_dir = c->call("thread/resume", json{{"threadId", fork_id}, {"path", home}});
  EXPECT_NE(error_message(by_dir).find("path is a directory"), std::string::npos) << by_dir;
  EXPECT_EQ(error_message(by_dir).find("Is a directory"), std::string::npos);
  auto fork_dir = c->call("thread/fork", json{{"threadId", fork_id}, {"path", home}});
  EXPECT_NE(error_message(fork_dir).find("path is a directory"), std::string::npos) << fork_dir;
  EXPECT_EQ(c->close_and_wait(), 0);
}

// A thread whose rollout cannot be read is not "not loaded": thread/read
// and thread/resume say why, with the file and the line, so an operator can
// find it and `parley store check --repair` it.
TEST_F(thread_store, an_unreadable_rollout_is_named_with_its_line) {
  std::string thread;
  {
    auto c = server();
    thread = start_thread(*c);
    c->start_turn(thread, "say: soon damaged");
    turn_done(*c);
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto files = rollouts(home);
  ASSERT_EQ(files.size(), 1u);
  {
    std::ifstream in{files[0]};
    std::stringstream rest;
    std::string first;
    std::getline(in, first);
    rest << in.rdbuf();
    std::ofstream out{files[0], std::ios::trunc};
    out << "\x01garbage where the session metadata was\n" << rest.str();
  }
  auto c = server();
  for (auto method : {"thread/read", "thread/resume"}) {
    auto r = c->call(method, json{{"threadId", thread}, {"includeTurns", true}});
    auto message = error_message(r);
    EXPECT_NE(message.find(files[0]), std::string::npos) << method << ": " << r;
    EXPECT_NE(message.find("line 1"), std::string::npos) << method << ": " << r;
    EXPECT_EQ(message.find("not loaded"), std::string::npos) << method << ": " << r;
  }
  EXPECT_EQ(c->close_and_wait(), 0);
}

TEST_F(thread_store, explicit_paths_are_validated_before_any_read) {
  std::ofstream{dir + "/notes.txt"} << "just some text\n";
  std::ofstream{dir + "/other.jsonl"} << R"({"type":"event_msg","payload":{}})" << "\n";
  {
    auto plain = server();
    auto r = plain->call("thread/resume", json{{"threadId", "x"}, {"path", dir + "/notes.txt"}});
    EXPECT_EQ(error_message(r), "thread/resume.path requires experimentalApi capability");
    r = plain->call("thread/fork", json{{"threadId", "x"}, {"path", dir + "/notes.txt"}});
    EXPECT_EQ(error_message(r), "thread/fork.path requires experimentalApi capability");
    EXPECT_EQ(plain->close_and_wait(), 0);
  }
  auto c = server({}, json{{"experimentalApi", true}});
  auto expect = [&](const std::string& path, const std::string& message) {
    for (auto method : {"thread/resume", "thread/fork"}) {
      auto r = c->call(method, json{{"threadId", "not-even-a-uuid"}, {"path", path}});
      EXPECT_EQ(error_message(r), message) << method << " " << path;
    }
  };
  expect(dir, "failed to resolve rollout path `" + dir + "`: path is a directory");
  expect(dir + "/missing.jsonl", "failed to resolve rollout path `" + dir + "/missing.jsonl`: file does not exist");
  expect(dir + "/notes.txt", "failed to read rollout `" + dir
                                 + "/notes.txt`: line 1: not JSON (a rollout starts with session metadata)");
  expect(dir + "/other.jsonl", "failed to read rollout `" + dir
                                   + "/other.jsonl`: line 1: it does not start with session metadata");
  EXPECT_EQ(c->close_and_wait(), 0);
}

TEST_F(thread_store, archive_and_unarchive_round_trip_through_zstd) {
  std::string thread;
  {
    auto c = server();
    thread = start_thread(*c);
    c->start_turn(thread, "say: keep me");
    turn_done(*c);
    EXPECT_EQ(c->call_ok("thread/archive", json{{"threadId", thread}}), json::object());
    EXPECT_EQ(c->wait_for_method("thread/archived")["params"]["threadId"], thread);
    EXPECT_EQ(c->call_ok("thread/list", json::object())["data"].size(), 0u);
    EXPECT_EQ(c->call_ok("thread/list", json{{"archived", true}})["data"][0]["id"], thread);
    EXPECT_EQ(c->call_ok("thread/loaded/list", json::object())["data"], json::array())
        << "archiving unloads the thread";
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  EXPECT_TRUE(rollouts(home).empty());
  auto archived = rollouts(home, "archived_sessions");
  ASSERT_EQ(archived.size(), 1u);
  EXPECT_EQ(fs::path(archived[0]).extension(), ".zst");
  std::ifstream f{archived[0], std::ios::binary};
  unsigned char magic[4] = {};
  f.read(reinterpret_cast<char*>(magic), 4);
  EXPECT_EQ(magic[0], 0x28);
  EXPECT_EQ(magic[3], 0xFD) << "zstd frame magic";

  auto c = server();
  EXPECT_EQ(c->call_ok("thread/list", json{{"archived", true}})["data"].size(), 1u);
  auto read = c->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
  EXPECT_EQ(read["thread"]["turns"][0]["items"][1]["text"], "keep me") << "read through zstd";
  auto un = c->call_ok("thread/unarchive", json{{"threadId", thread}});
  EXPECT_EQ(un["thread"]["id"], thread);
  EXPECT_EQ(c->wait_for_method("thread/unarchived")["params"]["threadId"], thread);
  EXPECT_EQ(c->call_ok("thread/list", json::object())["data"][0]["id"], thread);
  EXPECT_EQ(error_message(c->call("thread/archive",
                                  json{{"threadId", "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c99"}})),
            "no rollout found for thread id 019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c99");
  EXPECT_EQ(c->close_and_wait(), 0);
  EXPECT_EQ(rollouts(home).size(), 1u);
  EXPECT_TRUE(rollouts(home, "archived_sessions").empty());
}

TEST_F(thread_store, codex_rollouts_are_listed_read_resumed_and_forked) {
  auto legacy_dir = home + "/sessions/2025/11/07";
  auto paginated_dir = home + "/sessions/2025/11/08";
  fs::create_directories(legacy_dir);
  fs::create_directories(paginated_dir);
  const std::string legacy_id = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80";
  const std::string paginated_id = "019a6000-0000-7000-8000-000000000001";
  fs::copy_file(std::string{PARLEY_TEST_DATA} + "/codex-legacy.jsonl",
                legacy_dir + "/rollout-2025-11-07T07-20-00-" + legacy_id + ".jsonl");
  fs::copy_file(std::string{PARLEY_TEST_DATA} + "/codex-paginated.jsonl",
                paginated_dir + "/rollout-2025-11-08T09-00-00-" + paginated_id + ".jsonl");
  auto c = server();
  EXPECT_EQ(index_caught_up(*c)["read"], 2) << "a new index reads every rollout, behind the lists";
  auto list = c->call_ok("thread/list", json{{"sortDirection", "asc"}});
  ASSERT_EQ(list["data"].size(), 2u);
  EXPECT_EQ(list["data"][0]["id"], legacy_id);
  EXPECT_EQ(list["data"][0]["preview"], "Which tests are slow?");
  EXPECT_EQ(list["data"][0]["createdAt"], 1762500000);
  EXPECT_EQ(list["data"][0]["source"], "cli");
  EXPECT_EQ(list["data"][1]["preview"], "List the build files");

  auto legacy = c->call_ok("thread/read", json{{"threadId", legacy_id}, {"includeTurns", true}});
  auto& lt = legacy["thread"]["turns"];
  ASSERT_EQ(lt.size(), 2u);
  EXPECT_EQ(lt[0]["id"], "019a5c3e-7b44-7d02-8e11-90ab12cd34ef");
  EXPECT_EQ(lt[0]["status"], "completed");
  EXPECT_EQ(lt[0]["durationMs"], 4000);
  EXPECT_EQ(lt[0]["items"][0]["id"], "item-1");
  EXPECT_EQ(lt[0]["items"][1]["text"], "The integration suite takes most of the time.");
  EXPECT_EQ(lt[1]["status"], "interrupted");

  auto paginated = c->call_ok("thread/read", json{{"threadId", paginated_id}, {"includeTurns", true}});
  auto& items = paginated["thread"]["turns"][0]["items"];
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]["id"], "019a6000-0000-7000-8000-0000000000b1");
  EXPECT_EQ(items[1]["type"], "commandExecution");
  EXPECT_EQ(items[1]["command"], "/bin/bash -lc 'ls build'");
  EXPECT_EQ(items[1]["cwd"], "/srv/app");
  EXPECT_EQ(items[1]["commandActions"][0]["type"], "listFiles");
  EXPECT_EQ(items[1]["durationMs"], 12);
  EXPECT_EQ(items[2]["text"], "There is one: Makefile.");

  auto resumed = c->call_ok("thread/resume", json{{"threadId", legacy_id}, {"cwd", dir}, {"approvalPolicy", "never"}});
  EXPECT_EQ(resumed["thread"]["turns"].size(), 2u);
  c->start_turn(legacy_id, "say: parley continues a Codex thread");
  EXPECT_EQ(turn_done(*c)["params"]["turn"]["status"], "completed");
  auto fork = c->call_ok("thread/fork", json{{"threadId", paginated_id}});
  EXPECT_EQ(fork["thread"]["turns"][0]["items"].size(), 3u);
  EXPECT_EQ(c->close_and_wait(), 0);
  auto c2 = server();
  EXPECT_EQ(c2->call_ok("thread/read", json{{"threadId", legacy_id}, {"includeTurns", true}})["thread"]["turns"].size(), 3u);
  EXPECT_EQ(c2->call_ok("thread/list", json::object())["data"].size(), 3u);
  EXPECT_EQ(c2->close_and_wait(), 0);
}

// Codex may share the home: what another process writes while parley is
// stopped is found by the start's reconcile, which reads only that rollout;
// a start after parley's own orderly stop reads none.
TEST_F(thread_store, a_rollout_another_process_wrote_is_found_by_the_next_start) {
  {
    auto c = server();
    auto t = start_thread(*c);
    c->start_turn(t, "say: mine");
    turn_done(*c);
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  const std::string codex_id = "019a6000-0000-7000-8000-000000000001";
  auto codex_dir = home + "/sessions/2025/11/08";
  fs::create_directories(codex_dir);
  fs::copy_file(std::string{PARLEY_TEST_DATA} + "/codex-paginated.jsonl",
                codex_dir + "/rollout-2025-11-08T09-00-00-" + codex_id + ".jsonl");
  {
    auto c = server();
    auto index = index_caught_up(*c);
    EXPECT_EQ(index["seen"], 2);
    EXPECT_EQ(index["read"], 1) << "only the rollout the index did not know";
    EXPECT_EQ(index["removed"], 0);
    auto ids = std::set<std::string>{};
    auto listed = c->call_ok("thread/list", json::object());
    for (auto& t : listed["data"]) ids.insert(t["id"].get<std::string>());
    EXPECT_EQ(ids.size(), 2u);
    EXPECT_EQ(ids.count(codex_id), 1u);
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto c = server();
  auto index = index_caught_up(*c);
  EXPECT_EQ(index["seen"], 2);
  EXPECT_EQ(index["read"], 0) << "an orderly stop leaves nothing to read";
  EXPECT_EQ(c->close_and_wait(), 0);
}

TEST_F(thread_store, the_index_is_rebuilt_when_missing) {
  {
    auto c = server();
    for (int i = 0; i < 5; ++i) {
      auto t = start_thread(*c);
      c->start_turn(t, "say: thread " + std::to_string(i));
      turn_done(*c);
    }
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  for (auto suffix : {"", "-wal", "-shm"}) fs::remove(home + "/parley-index.sqlite" + suffix);
  {
    auto c = server();
    EXPECT_EQ(index_caught_up(*c)["read"], 5) << "rebuilt behind the lists";
    EXPECT_EQ(c->call_ok("thread/list", json::object())["data"].size(), 5u);
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto out = std::string{};
  FILE* p = ::popen((parley_binary() + " store reindex --home=" + home).c_str(), "r");
  char buf[256];
  while (auto n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0);
  EXPECT_EQ(out, "indexed 5 thread(s) under " + home + "\n");
}

TEST_F(thread_store, one_process_owns_a_home) {
  auto first = server();
  child_process second{{parley_binary(), "app-server", "--home=" + home}, dir + "/second.err"};
  EXPECT_EQ(second.wait(), 1);
  std::ifstream err{dir + "/second.err"};
  std::string text{std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>()};
  EXPECT_NE(text.find("another parley process"), std::string::npos) << text;
  EXPECT_EQ(first->close_and_wait(), 0);
}

TEST_F(thread_store, memory_store_keeps_nothing) {
  {
    auto c = server({"--store=memory"});
    auto t = start_thread(*c);
    c->start_turn(t, "say: gone soon");
    turn_done(*c);
    EXPECT_EQ(c->call_ok("thread/list", json::object())["data"].size(), 1u);
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  EXPECT_TRUE(rollouts(home).empty());
  auto c = server({"--store=memory"});
  EXPECT_EQ(c->call_ok("thread/list", json::object())["data"].size(), 0u);
  EXPECT_EQ(c->close_and_wait(), 0);
}

}  // namespace
}  // namespace parley::test
