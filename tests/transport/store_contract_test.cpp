// The store's contract through the real binary, one suite for every backend
// (issue 20): each test runs on the local store and on PostgreSQL (a private
// cluster for the run, a fresh database per test, `parley store migrate`
// first), and the listing tests on the memory store too. What only one
// backend has (rollout files, zstd archives, the SQLite index, Codex files)
// stays in thread_store_test.cpp.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "tests/support/app_server_client.hpp"
#include "tests/support/pg_cluster.hpp"
#include "transport/child_process.hpp"

namespace parley::test {
namespace {

json turn_done(app_server_client& c) { return c.wait_for_method("turn/completed"); }

/// Runs `parley store migrate` on `url`; its exit status.
int migrate(const std::string& url) {
  child_process p({parley_binary(), "store", "migrate", "--store-url=" + url});
  p.close_stdin();
  return p.wait();
}

class store_backend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto name = std::string{::testing::UnitTest::GetInstance()->current_test_info()->name()};
    for (auto& ch : name)
      if (ch == '/') ch = '_';
    dir = make_temp_dir(name);
    home = dir + "/home";
    store_args = {"--store=" + backend()};
    if (backend() == "postgres") {
      PARLEY_REQUIRE_POSTGRES();
      auto db = "t" + std::to_string(++databases) + "_" + std::to_string(::getpid());
      auto url = pg_cluster::shared().create_database(db);
      ASSERT_EQ(migrate(url), 0);
      store_args.push_back("--store-url=" + url);
    }
  }

  const std::string& backend() const { return GetParam(); }

  std::unique_ptr<app_server_client> server(std::vector<std::string> extra = {},
                                            json capabilities = json::object()) {
    extra.push_back("--home=" + home);
    extra.insert(extra.end(), store_args.begin(), store_args.end());
    auto c = std::make_unique<app_server_client>(extra);
    c->initialize(capabilities);
    return c;
  }

  std::string start_thread(app_server_client& c, const std::string& policy = "never") {
    return c.start_thread(json{{"approvalPolicy", policy}, {"cwd", dir}});
  }

  static inline int databases = 0;
  std::string dir;
  std::string home;
  std::vector<std::string> store_args;
};

/// What a durable store keeps across a restart.
class store_contract : public store_backend {};
/// What every store does within one process.
class store_listing : public store_backend {};

TEST_P(store_contract, threads_survive_a_restart_and_resume) {
  std::string thread;
  {
    auto c = server();
    thread = start_thread(*c);
    c->start_turn(thread, "say: first turn");
    turn_done(*c);
    c->start_turn(thread, "run: echo stored");
    turn_done(*c);
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  if (backend() == "local") {
    ASSERT_EQ(rollouts(home).size(), 1u);
  }
  auto c = server();
  auto list = c->call_ok("thread/list", json::object());
  ASSERT_EQ(list["data"].size(), 1u);
  EXPECT_EQ(list["data"][0]["id"], thread);
  EXPECT_EQ(list["data"][0]["preview"], "say: first turn");
  EXPECT_EQ(list["data"][0]["status"], (json{{"type", "notLoaded"}}));
  EXPECT_EQ(c->call_ok("thread/loaded/list", json::object())["data"], json::array());

  auto read = c->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
  auto& turns = read["thread"]["turns"];
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0]["status"], "completed");
  EXPECT_EQ(turns[0]["items"][1]["text"], "first turn");
  auto& cmd = turns[1]["items"][1];
  EXPECT_EQ(cmd["type"], "commandExecution");
  EXPECT_EQ(cmd["command"], "/bin/sh -c 'echo stored'");
  EXPECT_EQ(cmd["aggregatedOutput"], "stored\n");
  EXPECT_EQ(cmd["exitCode"], 0);
  EXPECT_EQ(cmd["cwd"], dir);

  auto resumed = c->call_ok("thread/resume", json{{"threadId", thread}, {"approvalPolicy", "never"}});
  EXPECT_EQ(resumed["thread"]["turns"].size(), 2u);
  EXPECT_EQ(resumed["thread"]["status"], (json{{"type", "idle"}}));
  c->start_turn(thread, "say: after the restart");
  EXPECT_EQ(turn_done(*c)["params"]["turn"]["status"], "completed");
  auto again = c->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
  EXPECT_EQ(again["thread"]["turns"].size(), 3u);
  EXPECT_EQ(c->close_and_wait(), 0);
  if (backend() == "local") {
    EXPECT_EQ(rollouts(home).size(), 1u) << "the resumed thread appends to its own rollout";
  }
  for (auto& m : c->log()) EXPECT_NE(method_of(m), "thread/started") << "resume sends no thread/started";
}

TEST_P(store_contract, fork_at_a_turn_copies_history_under_a_new_id) {
  auto c = server();
  auto thread = start_thread(*c);
  std::vector<std::string> turns;
  for (auto text : {"say: one", "say: two", "say: three"}) {
    turns.push_back(c->start_turn(thread, text));
    turn_done(*c);
  }
  auto fork = c->call_ok("thread/fork", json{{"threadId", thread}, {"lastTurnId", turns[1]}});
  auto& t = fork["thread"];
  EXPECT_NE(t["id"], thread);
  EXPECT_EQ(t["forkedFromId"], thread);
  ASSERT_EQ(t["turns"].size(), 2u);
  EXPECT_EQ(t["turns"][1]["items"][1]["text"], "two");
  auto started = c->wait_for_method("thread/started");
  EXPECT_EQ(started["params"]["thread"]["id"], t["id"]);
  EXPECT_EQ(error_message(c->call("thread/fork", json{{"threadId", thread}, {"lastTurnId", "nope"}})),
            "turn not found: nope");
  // The fork is a thread of its own: it continues and persists.
  auto fork_id = t["id"].get<std::string>();
  c->call_ok("thread/resume", json{{"threadId", fork_id}});
  c->start_turn(fork_id, "say: branch");
  turn_done(*c);
  EXPECT_EQ(c->close_and_wait(), 0);
  auto c2 = server();
  auto read = c2->call_ok("thread/read", json{{"threadId", fork_id}, {"includeTurns", true}});
  EXPECT_EQ(read["thread"]["turns"].size(), 3u);
  EXPECT_EQ(read["thread"]["forkedFromId"], thread);
  EXPECT_EQ(c2->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}})["thread"]["turns"].size(), 3u);
}

// thread/revert, thread/metadata/update and thread/inject_items keep what
// they changed across a restart, on every durable store; a revert leaves
// the thread taking turns after the kept ones.
TEST_P(store_contract, revert_metadata_and_injected_items_survive_a_restart) {
  std::string thread;
  std::vector<std::string> turns;
  {
    auto c = server();
    thread = start_thread(*c);
    for (auto text : {"say: one", "say: two", "say: three"}) {
      turns.push_back(c->start_turn(thread, text));
      turn_done(*c);
    }
    c->call_ok("thread/metadata/update",
               json{{"threadId", thread}, {"gitInfo", json{{"branch", "main"}, {"sha", "abc123"}}}});
    c->call_ok("thread/inject_items",
               json{{"threadId", thread},
                    {"items", json::array({json{{"type", "message"},
                                                {"role", "user"},
                                                {"content", json::array({json{{"type", "input_text"},
                                                                              {"text", "injected"}}})}}})}});
    auto reverted = c->call_ok("thread/revert", json{{"threadId", thread}, {"beforeTurnId", turns[1]}});
    EXPECT_EQ(error_message(c->call("thread/revert",
                                    json{{"threadId", thread}, {"beforeTurnId", "nope"}})),
              "turn not found: nope");
    c->start_turn(thread, "say: four");
    EXPECT_EQ(turn_done(*c)["params"]["turn"]["status"], "completed");
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto c = server();
  auto read = c->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
  auto& kept = read["thread"]["turns"];
  ASSERT_EQ(kept.size(), 2u) << read.dump();
  EXPECT_EQ(kept[0]["id"], turns[0]);
  EXPECT_EQ(kept[1]["items"][1]["text"], "four");
  EXPECT_EQ(read["thread"]["gitInfo"]["branch"], "main") << read.dump();
  EXPECT_EQ(read["thread"]["gitInfo"]["sha"], "abc123");
  c->call_ok("thread/resume", json{{"threadId", thread}, {"approvalPolicy", "never"}});
  c->start_turn(thread, "say: five");
  EXPECT_EQ(turn_done(*c)["params"]["turn"]["status"], "completed");
  EXPECT_EQ(c->close_and_wait(), 0);
}

// Codex 0.169's answers (checked against the real app-server): nothing to
// move is an error, an archived thread does not resume, a blank name is
// refused (it used to wipe the stored name).
TEST_P(store_contract, archive_unarchive_resume_and_rename_follow_codex) {
  std::string thread;
  {
    auto c = server();
    thread = start_thread(*c);
    c->start_turn(thread, "say: keep me");
    turn_done(*c);
    EXPECT_EQ(c->call_ok("thread/name/set", json{{"threadId", thread}, {"name", "kept"}}),
              json::object());
    for (auto blank : {"", "   ", "\t\n"}) {
      auto r = c->call("thread/name/set", json{{"threadId", thread}, {"name", blank}});
      EXPECT_EQ(r["error"]["code"], -32600) << r.dump();
      EXPECT_EQ(error_message(r), "thread name must not be empty");
    }
    auto un = c->call("thread/unarchive", json{{"threadId", thread}});
    EXPECT_EQ(un["error"]["code"], -32600) << un.dump();
    EXPECT_EQ(error_message(un), "no archived rollout found for thread id " + thread);
    EXPECT_EQ(c->call_ok("thread/archive", json{{"threadId", thread}}), json::object());
    auto again = c->call("thread/archive", json{{"threadId", thread}});
    EXPECT_EQ(again["error"]["code"], -32600) << again.dump();
    EXPECT_EQ(error_message(again), "no rollout found for thread id " + thread);
    auto resume = c->call("thread/resume", json{{"threadId", thread}});
    EXPECT_EQ(resume["error"]["code"], -32600) << resume.dump();
    EXPECT_EQ(error_message(resume).rfind("session " + thread + " is archived.", 0), 0u)
        << resume.dump();
    auto fork = c->call("thread/fork", json{{"threadId", thread}});
    EXPECT_EQ(error_message(fork).rfind("session " + thread + " is archived.", 0), 0u)
        << fork.dump();
    EXPECT_EQ(c->call_ok("thread/loaded/list", json::object())["data"], json::array());
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto c = server();
  auto read = c->call_ok("thread/read", json{{"threadId", thread}});
  EXPECT_EQ(read["thread"]["name"], "kept") << "a refused name leaves the stored one";
  EXPECT_EQ(c->call_ok("thread/unarchive", json{{"threadId", thread}})["thread"]["id"], thread);
  EXPECT_EQ(c->call_ok("thread/resume", json{{"threadId", thread}})["thread"]["id"], thread);
  EXPECT_EQ(c->close_and_wait(), 0);
}

// A search term is a case-insensitive substring of the preview or the name;
// LIKE's wildcards and escape character in it are taken literally.
TEST_P(store_listing, a_search_terms_wildcards_are_literal) {
  auto c = server();
  std::map<std::string, std::string> by_text;
  for (const char* text : {"100% sure", "100 percent", "a_b here", "axb here", "back\\slash",
                           "backslash", "plain words"}) {
    auto t = start_thread(*c);
    c->start_turn(t, std::string{"say: "} + text);
    turn_done(*c);
    by_text[text] = t;
  }
  EXPECT_EQ(c->call_ok("thread/name/set", json{{"threadId", by_text["plain words"]},
                                               {"name", "Quarterly Review"}}),
            json::object());
  auto found = [&](const std::string& term) {
    std::set<std::string> ids;
    auto page = c->call_ok("thread/list", json{{"searchTerm", term}});
    for (auto& t : page["data"]) ids.insert(t["id"].get<std::string>());
    return ids;
  };
  EXPECT_EQ(found("0% s"), std::set<std::string>{by_text["100% sure"]});
  EXPECT_EQ(found("a_b"), std::set<std::string>{by_text["a_b here"]});
  EXPECT_EQ(found("k\\s"), std::set<std::string>{by_text["back\\slash"]});
  EXPECT_EQ(found("%"), std::set<std::string>{by_text["100% sure"]});
  // (an index may take the name a moment after the answer: up to 5 s)
  std::set<std::string> named;
  for (int i = 0; i < 100 && named.empty(); ++i) {
    named = found("QUARTERLY rev");
    if (named.empty()) std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(named, std::set<std::string>{by_text["plain words"]}) << "the name is searched too";
  EXPECT_EQ(c->close_and_wait(), 0);
}

TEST_P(store_listing, list_pages_through_200_threads_in_every_order) {
  auto c = server();
  std::set<std::string> all;
  for (int i = 0; i < 200; ++i) {
    auto t = start_thread(*c);
    all.insert(t);
    c->start_turn(t, i % 20 == 7 ? "say: needle " + std::to_string(i) : "say: hay " + std::to_string(i));
  }
  for (int i = 0; i < 200; ++i) turn_done(*c);
  for (auto key : {"created_at", "updated_at", "recency_at"}) {
    for (auto direction : {"asc", "desc"}) {
      std::vector<json> seen;
      json cursor = nullptr;
      int pages = 0;
      do {
        json params{{"limit", 37}, {"sortKey", key}, {"sortDirection", direction}};
        if (!cursor.is_null()) params["cursor"] = cursor;
        auto page = c->call_ok("thread/list", params);
        for (auto& t : page["data"]) seen.push_back(t);
        cursor = page["nextCursor"];
        ASSERT_LT(++pages, 10);
      } while (!cursor.is_null());
      ASSERT_EQ(seen.size(), 200u) << key << " " << direction;
      std::set<std::string> ids;
      for (auto& t : seen) ids.insert(t["id"].get<std::string>());
      EXPECT_EQ(ids, all);
      const char* field = std::string{key} == "created_at" ? "createdAt" : "updatedAt";
      for (size_t i = 1; i < seen.size(); ++i) {
        auto a = std::make_pair(seen[i - 1][field].get<int64_t>(), seen[i - 1]["id"].get<std::string>());
        auto b = std::make_pair(seen[i][field].get<int64_t>(), seen[i]["id"].get<std::string>());
        if (std::string{direction} == "asc")
          EXPECT_LT(a, b);
        else
          EXPECT_GT(a, b);
      }
    }
  }
  auto found = c->call_ok("thread/list", json{{"searchTerm", "NEEDLE"}, {"limit", 100}});
  EXPECT_EQ(found["data"].size(), 10u);
  for (auto& t : found["data"]) EXPECT_NE(t["preview"].get<std::string>().find("needle"), std::string::npos);
  EXPECT_EQ(c->call_ok("thread/list", json{{"cwd", "/elsewhere"}})["data"].size(), 0u);
  EXPECT_EQ(c->call_ok("thread/list", json{{"cwd", json::array({dir})}, {"limit", 300}})["data"].size(), 200u);
  EXPECT_EQ(c->close_and_wait(), 0);
}

TEST_P(store_contract, a_thread_keeps_its_tenant_across_a_restart) {
  // Issue 22: the tenant is stored with the thread (stdio is the local
  // operator, --local-tenant); another tenant's thread is an unknown one.
  std::string thread;
  std::string fork;
  std::string bare;  // no turn: not listed (the tenant check reads its file)
  {
    auto c = server({"--local-tenant=acme"});
    thread = start_thread(*c);
    c->start_turn(thread, "say: acme's");
    turn_done(*c);
    fork = c->call_ok("thread/fork", json{{"threadId", thread}})["thread"]["id"];
    bare = start_thread(*c);
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  {
    auto c = server({"--local-tenant=globex"});
    EXPECT_EQ(c->call_ok("thread/list", json::object())["data"], json::array());
    auto foreign = c->call("thread/read", json{{"threadId", thread}});
    const std::string unknown = "00000000-0000-7000-8000-000000000000";
    auto none = c->call("thread/read", json{{"threadId", unknown}});
    ASSERT_TRUE(foreign.contains("error")) << foreign.dump();
    auto expected = none["error"].dump();
    for (auto at = expected.find(unknown); at != std::string::npos; at = expected.find(unknown))
      expected.replace(at, unknown.size(), thread);
    EXPECT_EQ(foreign["error"].dump(), expected);
    auto bare_foreign = c->call("thread/resume", json{{"threadId", bare}});
    auto bare_none = c->call("thread/resume", json{{"threadId", unknown}});
    ASSERT_TRUE(bare_foreign.contains("error")) << bare_foreign.dump();
    expected = bare_none["error"].dump();
    for (auto at = expected.find(unknown); at != std::string::npos; at = expected.find(unknown))
      expected.replace(at, unknown.size(), bare);
    EXPECT_EQ(bare_foreign["error"].dump(), expected) << "a thread without turns is acme's too";
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto c = server({"--local-tenant=acme"});
  EXPECT_EQ(c->call_ok("thread/resume", json{{"threadId", bare}})["thread"]["id"], bare);
  auto list = c->call_ok("thread/list", json::object());
  std::set<std::string> ids;
  for (auto& t : list["data"]) ids.insert(t["id"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{thread, fork})) << "the fork is acme's too";
  EXPECT_EQ(c->call_ok("thread/read", json{{"threadId", thread}})["thread"]["id"], thread);
  EXPECT_EQ(c->close_and_wait(), 0);
}

TEST_P(store_contract, names_unsubscribe_and_idle_unload) {
  std::string thread;
  {
    auto c = server({"--idle-unload=300ms"});
    thread = start_thread(*c);
    c->start_turn(thread, "say: named");
    turn_done(*c);
    EXPECT_EQ(c->call_ok("thread/name/set", json{{"threadId", thread}, {"name", "release prep"}}),
              json::object());
    EXPECT_EQ(c->wait_for_method("thread/name/updated")["params"]["threadName"], "release prep");
    EXPECT_EQ(c->call_ok("thread/unsubscribe", json{{"threadId", thread}})["status"], "unsubscribed");
    EXPECT_EQ(c->call_ok("thread/unsubscribe", json{{"threadId", thread}})["status"], "notSubscribed");
    bool unloaded = false;
    for (int i = 0; i < 100 && !unloaded; ++i) {
      unloaded = c->call_ok("thread/loaded/list", json::object())["data"].empty();
      if (!unloaded) std::this_thread::sleep_for(50ms);
    }
    EXPECT_TRUE(unloaded) << "an idle thread without subscribers is unloaded";
    EXPECT_EQ(c->call_ok("thread/unsubscribe", json{{"threadId", thread}})["status"], "notLoaded");
    // Renaming a thread that is not loaded goes straight to the store.
    EXPECT_EQ(c->call_ok("thread/name/set", json{{"threadId", thread}, {"name", "shipped"}}),
              json::object());
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto c = server();
  EXPECT_EQ(c->call_ok("thread/list", json::object())["data"][0]["name"], "shipped");
  EXPECT_EQ(c->call_ok("thread/read", json{{"threadId", thread}})["thread"]["name"], "shipped");
  EXPECT_EQ(c->close_and_wait(), 0);
}

std::string backend_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(backends, store_contract, ::testing::Values("local", "postgres"),
                         backend_name);
INSTANTIATE_TEST_SUITE_P(backends, store_listing, ::testing::Values("memory", "local", "postgres"),
                         backend_name);

}  // namespace
}  // namespace parley::test
