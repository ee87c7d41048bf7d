// What the Codex TUI asks of a server beyond the basics (protocol.md §6),
// against the real binary: honest empty answers for features parley lacks,
// thread/turns/list for its side panel and `codex resume`, the startup
// interrupt with no turn id, and a structured turn (its title generation)
// that never runs a tool or asks.

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

TEST(tui_compat, features_parley_lacks_are_empty_lists_and_others_unsupported) {
  app_server_client c;
  c.initialize();
  EXPECT_EQ(c.call_ok("skills/list", json{{"cwds", json::array()}}),
            json({{"data", json::array()}}));
  auto plugins = c.call_ok("plugin/installed", json::object());
  EXPECT_EQ(plugins["marketplaces"], json::array());
  // No hook program configured: one entry (the server's cwd) with none.
  auto hooks = c.call_ok("hooks/list", json::object());
  ASSERT_EQ(hooks["data"].size(), 1u);
  EXPECT_EQ(hooks["data"][0]["hooks"], json::array());
  EXPECT_EQ(c.call("thread/rewind", json{{"threadId", "x"}, {"beforeTurnId", "t"}})["error"]["code"],
            -32601);
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(tui_compat, an_interrupt_without_a_turn_id_is_answered) {
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread();
  auto r = c.call("turn/interrupt", json{{"threadId", thread}, {"turnId", ""}});
  EXPECT_EQ(r["result"], json::object());
  // The session goes on.
  c.start_turn(thread, "say: still here");
  c.wait_for_method("turn/completed");
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(tui_compat, turns_list_pages_newest_first_with_cursors) {
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread();
  std::vector<std::string> turns;
  for (auto text : {"say: one", "say: two", "say: three"}) {
    turns.push_back(c.start_turn(thread, text));
    c.wait_for_method("turn/completed");
  }
  auto page = c.call_ok("thread/turns/list",
                        json{{"threadId", thread}, {"limit", 2}, {"sortDirection", "desc"}});
  ASSERT_EQ(page["data"].size(), 2u);
  EXPECT_EQ(page["data"][0]["id"], turns[2]);
  EXPECT_EQ(page["data"][1]["id"], turns[1]);
  EXPECT_EQ(page["data"][0]["itemsView"], "summary");
  ASSERT_TRUE(page["nextCursor"].is_string());
  auto rest = c.call_ok(
      "thread/turns/list",
      json{{"threadId", thread}, {"cursor", page["nextCursor"]}, {"itemsView", "full"}});
  ASSERT_EQ(rest["data"].size(), 1u);
  EXPECT_EQ(rest["data"][0]["id"], turns[0]);
  EXPECT_TRUE(rest["nextCursor"].is_null());
  auto bad = c.call("thread/turns/list", json{{"threadId", thread}, {"cursor", "nonsense"}});
  EXPECT_EQ(bad["error"]["code"], -32600);
  EXPECT_EQ(c.close_and_wait(), 0);
}

TEST(tui_compat, a_structured_turn_never_runs_a_tool_or_asks) {
  auto dir = make_temp_dir("tui_compat_title");
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread(json{{"ephemeral", true},
                                    {"sandbox", "read-only"},
                                    {"cwd", dir},
                                    {"threadSource", "thread_title"}});
  json schema = {{"type", "object"}, {"properties", {{"title", {{"type", "string"}}}}}};
  c.start_turn(thread,
               "run[escalate]: touch made\npatch:\n*** Begin Patch\n*** Add File: p.txt\n+x\n*** End "
               "Patch\nsay: A title",
               json{{"outputSchema", schema}});
  auto done = c.wait_for_method("turn/completed");
  EXPECT_EQ(done["params"]["turn"]["status"], "completed");
  for (auto& m : c.log()) {
    EXPECT_EQ(method_of(m).find("requestApproval"), std::string::npos) << m;
    if (method_of(m) == "item/started") {
      auto type = m["params"]["item"]["type"];
      EXPECT_NE(type, "commandExecution");
      EXPECT_NE(type, "fileChange");
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/made"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/p.txt"));
  EXPECT_EQ(c.close_and_wait(), 0);
}

}  // namespace
}  // namespace parley::test
