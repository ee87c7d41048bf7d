// A turn's actions are durable (issue 19): on the live path each phase is
// stored before what it names happens, and a turn loaded again after a
// restart goes on from the last stored phase: a stored decision is applied
// exactly once, an action that may have started is never run again. On
// CAF's test coordinator, with the store, the model and the clients mocked.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "actors/threads/turn_actions.hpp"
#include "tests/support/restored_turns.hpp"

namespace parley {
namespace {

namespace fs = std::filesystem;
using phase = action_record::phase;

class turn_restore_test : public ::testing::Test, public test::restored_turns {
 protected:
  static bool saw(const test::client_log& log, const std::string& what) {
    return std::find(log.seen.begin(), log.seen.end(), what) != log.seen.end();
  }
};

// -- the live path --------------------------------------------------------------

TEST_F(turn_restore_test, a_live_command_is_asked_decided_and_started_each_after_it_is_stored) {
  steps->push_back(test::escalate("touch never"));
  auto conv = start_conversation();
  auto log = open(conv);
  stored->hold_appends = true;  // every record waits for the store from here on
  auto held_from = stored->appended.size();
  auto before = protocol::unix_ms();
  start_turn(conv);
  auto after = protocol::unix_ms();

  // Asked: stored with its deadline...
  auto asked = actions_at(phase::asked);
  ASSERT_EQ(asked.size(), 1u);
  auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(config->approval_timeout);
  EXPECT_GE(asked[0].deadline_ms, before + timeout.count() - 1000);
  EXPECT_LE(asked[0].deadline_ms, after + timeout.count() + 1000);
  EXPECT_EQ(asked[0].command, "touch never");
  // ... and no client is asked while that record alone waits for the
  // store (everything the turn stored before it is acknowledged).
  auto asked_at = position_of(phase::asked, asked[0].item_id);
  test::release_appends(*self, svc.store, static_cast<uint64_t>(asked_at) - held_from);
  run();
  // The user's message and the command: the item is shown, not asked about.
  EXPECT_EQ(std::count(log->seen.begin(), log->seen.end(), "item/started"), 2);
  EXPECT_TRUE(log->asks.empty());
  test::release_appends(*self, svc.store);
  run();
  ASSERT_EQ(log->asks.size(), 1u);
  EXPECT_EQ(log->asks[0].item_id(), asked[0].item_id);

  // Decided: stored before the turn hears the accept; nothing starts.
  send_answer(0, log->asks[0].key, protocol::approval_decision::accept());
  run();
  auto decided = actions_at(phase::decided);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].outcome, "decided");
  EXPECT_EQ(decided[0].decision, nlohmann::json(protocol::approval_decision::accept()));
  EXPECT_EQ(decided[0].stage, "client");
  EXPECT_EQ(decided[0].decided_by, "connection#" + std::to_string(clients[0].id()));
  EXPECT_TRUE(actions_at(phase::started).empty());

  // Started: stored after the decision was acknowledged, and the command's
  // runner is not spawned while the store has not acknowledged it.
  test::release_appends(*self, svc.store);
  run();
  ASSERT_EQ(actions_at(phase::started).size(), 1u);
  EXPECT_LT(position_of(phase::decided, asked[0].item_id),
            position_of(phase::started, asked[0].item_id));
  EXPECT_EQ(svc.telemetry->counts().execs, 0);
}

// -- restored from `decided` ------------------------------------------------------

TEST_F(turn_restore_test, a_stored_decline_ends_the_item_declined_and_never_starts_it) {
  steps->push_back(test::say("next"));
  auto conv = start_conversation();
  auto log = resume(conv);  // a listener, so the item's end can be seen
  auto action = decided(stored_command(phase::asked, "touch never"),
                        protocol::approval_decision::decline());
  restore(conv, action);

  EXPECT_TRUE(actions().empty());  // nothing new to store: no start, no second decision
  EXPECT_TRUE(log->asks.empty());
  auto items = stored_commands();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].id, action.item_id);
  EXPECT_EQ(items[0].status, protocol::item_status::declined);
  EXPECT_TRUE(saw(*log, "item/completed:command:declined"));
  // The model goes on from the stored step, told the call was declined.
  ASSERT_EQ(model_asked->size(), 2u);  // about the call, then after saying "next"
  const auto& told = model_asked->front();
  EXPECT_TRUE(told.resumed);
  EXPECT_EQ(told.resumed_call, action.item_id);
  ASSERT_EQ(told.step_results.size(), 1u);
  EXPECT_EQ(told.step_results.back().what, step_result::kind::declined);
  EXPECT_TRUE(steps->empty());
  EXPECT_EQ(stored_turn_status(), protocol::turn_status::completed);
}

TEST_F(turn_restore_test, a_stored_accept_stores_its_start_once_before_the_command_runs) {
  auto conv = start_conversation();
  stored->hold_appends = true;  // the start stays unacknowledged: the command never spawns here
  auto action
      = decided(stored_command(phase::asked, "touch once"), protocol::approval_decision::accept());
  restore(conv, action);
  // The thread manager and a thread/resume may both load the turn again:
  // the conversation has a turn already and ignores the second restore.
  restore(conv, action);

  auto started = actions_at(phase::started);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].item_id, action.item_id);
  EXPECT_EQ(started[0].command, "touch once");
  EXPECT_EQ(actions().size(), 1u);  // the decision was stored before the restart, not again
  EXPECT_EQ(svc.telemetry->counts().execs, 0);
  EXPECT_EQ(svc.telemetry->counts().turns, 1);
}

/// A directory of its own for a test that writes files.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& name)
      : path_(fs::temp_directory_path()
              / ("parley-restore-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~scratch_dir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST_F(turn_restore_test, a_stored_accept_of_a_file_change_writes_it_exactly_once) {
  scratch_dir dir{"accepted-patch"};
  const std::string patch
      = "*** Begin Patch\n*** Add File: restored.txt\n+written once\n*** End Patch\n";
  // The action as the turn stored it: its digest binds the decision to
  // exactly these changes.
  auto action = decided(stored_command(phase::asked, ""), protocol::approval_decision::accept());
  action.file_change = true;
  action.command.clear();
  action.cwd.clear();
  action.patch = patch;
  action.thread_cwd = dir.path().string();
  action.writable_roots = {dir.path().string()};
  turn_settings ts;
  ts.turn_id = action.turn_id;
  ts.cwd = action.thread_cwd;
  ts.writable_roots = action.writable_roots;
  patch_step planned;
  planned.item.id = action.item_id;
  ASSERT_FALSE(prepare_patch(ts, patch, planned));
  action.digest = file_change_ask(ts, planned).digest;

  steps->push_back(test::say("next"));
  auto conv = start_conversation();
  restore(conv, action);

  ASSERT_EQ(actions_at(phase::started).size(), 1u);
  EXPECT_EQ(actions().size(), 1u);
  std::ifstream written{dir.path() / "restored.txt"};
  std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "written once\n");
  ASSERT_EQ(model_asked->size(), 2u);
  EXPECT_EQ(model_asked->front().step_results.back().what, step_result::kind::patch_applied);
  EXPECT_EQ(stored_turn_status(), protocol::turn_status::completed);
}

// -- restored from `started` ------------------------------------------------------

TEST_F(turn_restore_test, a_started_command_is_never_run_again_its_item_fails_as_lost) {
  steps->push_back(test::say("next"));
  auto conv = start_conversation();
  auto log = resume(conv);
  auto action = stored_command(phase::started, "touch maybe-ran");
  // Held, a start the turn wrongly stored again would show here and stop
  // there (nothing spawns before its start is acknowledged).
  stored->hold_appends = true;
  restore(conv, action);
  ASSERT_TRUE(actions().empty());  // no second start
  EXPECT_EQ(svc.telemetry->counts().execs, 0);
  stored->hold_appends = false;
  test::release_appends(*self, svc.store);
  run();
  auto items = stored_commands();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].id, action.item_id);
  EXPECT_EQ(items[0].status, protocol::item_status::failed);
  ASSERT_TRUE(items[0].aggregated_output);
  EXPECT_NE(items[0].aggregated_output->find("parley stopped while this ran"), std::string::npos);
  EXPECT_TRUE(saw(*log, "item/completed:command:failed"));
  // The model is told exactly that, and its next step runs.
  ASSERT_EQ(model_asked->size(), 2u);  // about the call, then after saying "next"
  const auto& told = model_asked->front();
  EXPECT_EQ(told.resumed_call, action.item_id);
  ASSERT_EQ(told.step_results.size(), 1u);
  EXPECT_EQ(told.step_results.back().what, step_result::kind::lost);
  EXPECT_NE(told.step_results.back().detail.find("it was not run again"), std::string::npos);
  EXPECT_TRUE(steps->empty());
  EXPECT_EQ(log->seen.back(), "turn/completed");
  EXPECT_EQ(stored_turn_status(), protocol::turn_status::completed);
}

TEST_F(turn_restore_test, the_model_goes_on_after_the_steps_that_had_finished) {
  auto conv = start_conversation();
  auto action = stored_command(phase::started, "touch maybe-ran");
  action.step = 2;  // a message and a command had finished before this one
  restore(conv, action);
  ASSERT_EQ(model_asked->size(), 1u);
  EXPECT_EQ(model_asked->back().step_results.size(), 3u);
  EXPECT_EQ(model_asked->back().step_results.back().what, step_result::kind::lost);
}

}  // namespace
}  // namespace parley
