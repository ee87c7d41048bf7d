// What a turn's actions look like to the approval pipeline and the client:
// the asks it builds and the file changes an item shows (pure functions).

#include "actors/threads/turn_actions.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace parley {
namespace {

namespace fs = std::filesystem;

turn_settings settings_in(const std::string& cwd) {
  turn_settings s;
  s.thread_id = "thr";
  s.turn_id = "trn";
  s.cwd = cwd;
  s.writable_roots = {cwd};
  return s;
}

command_step command_of(const std::string& raw) {
  command_step c;
  c.item.id = "call_1";
  c.raw = raw;
  c.started_ms = 42;
  return c;
}

TEST(TurnActions, a_command_ask_carries_its_ids_and_binds_to_its_cwd) {
  auto ask = command_ask(settings_in("/w"), command_of("make test"));
  EXPECT_FALSE(ask.is_file_change());
  EXPECT_EQ(ask.turn_id(), "trn");
  EXPECT_EQ(ask.item_id(), "call_1");
  EXPECT_EQ(ask.command.started_at_ms, 42);
  EXPECT_EQ(ask.command.proposed_execpolicy_amendment, (std::vector<std::string>{"make", "test"}));
  EXPECT_NE(ask.digest, command_ask(settings_in("/elsewhere"), command_of("make test")).digest);
}

TEST(TurnActions, only_a_simple_command_proposes_an_amendment) {
  auto ask = command_ask(settings_in("/w"), command_of("make && rm -rf /"));
  EXPECT_TRUE(ask.command.proposed_execpolicy_amendment.empty());
}

class TurnPatches : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("turn_actions_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "old.txt") << "one\n";
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

TEST_F(TurnPatches, a_planned_patch_shows_absolute_paths_kinds_and_diffs) {
  patch_step p;
  p.item.id = "call_2";
  auto refusal = prepare_patch(settings_in(dir.string()),
                               "*** Begin Patch\n*** Add File: new.txt\n+hi\n"
                               "*** Update File: old.txt\n@@\n-one\n+two\n*** End Patch",
                               p);
  ASSERT_FALSE(refusal) << refusal->reason;
  ASSERT_EQ(p.item.changes.size(), 2u);
  EXPECT_EQ(p.item.changes[0].path, (dir / "new.txt").string());
  EXPECT_EQ(p.item.changes[0].type, protocol::file_update_change::kind::add);
  EXPECT_EQ(p.item.changes[0].diff, "hi\n");
  EXPECT_EQ(p.item.changes[1].type, protocol::file_update_change::kind::update);
  EXPECT_NE(p.item.changes[1].diff.find("-one\n+two"), std::string::npos);
  auto ask = file_change_ask(settings_in(dir.string()), p);
  EXPECT_TRUE(ask.is_file_change());
  EXPECT_EQ(ask.item_id(), "call_2");
  EXPECT_EQ(ask.changes.size(), 2u);
  EXPECT_EQ(fs::exists(dir / "new.txt"), false);  // planning writes nothing
}

TEST_F(TurnPatches, a_broken_patch_fails_and_an_escaping_one_is_refused_by_policy) {
  patch_step p;
  auto broken = prepare_patch(settings_in(dir.string()), "*** Begin Patch\nnonsense", p);
  ASSERT_TRUE(broken);
  EXPECT_FALSE(broken->by_policy);
  auto outside
      = prepare_patch(settings_in(dir.string()),
                      "*** Begin Patch\n*** Add File: /etc/parley-x\n+x\n*** End Patch", p);
  ASSERT_TRUE(outside);
  EXPECT_TRUE(outside->by_policy);
}

}  // namespace
}  // namespace parley
