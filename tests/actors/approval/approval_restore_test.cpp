// An approval asked before a restart is asked again (issue 19): the same
// item, of every client that resumes the thread, with the deadline that was
// left (stored as a time of day, so it kept running while the server was
// down); it waits for a client rather than failing when none is there yet;
// the first answer is stored and applied exactly once, any other refused.
// On CAF's test coordinator: time moves only when the test advances it.

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/restored_turns.hpp"

namespace parley {
namespace {

using namespace std::chrono_literals;
using phase = action_record::phase;

class approval_restore_test : public ::testing::Test, public test::restored_turns {
 protected:
  /// An ask stored before the restart whose deadline is `left` from now.
  action_record asked_with(std::chrono::milliseconds left) {
    return stored_command(phase::asked, "touch never", protocol::unix_ms() + left.count());
  }

  static bool saw(const test::client_log& log, const std::string& what) {
    return std::find(log.seen.begin(), log.seen.end(), what) != log.seen.end();
  }
};

TEST_F(approval_restore_test, the_deadline_that_was_left_keeps_running_across_the_restart) {
  steps->push_back(test::say("next"));
  auto conv = start_conversation();
  auto action = asked_with(30s);
  restore(conv, action);
  // Nobody is subscribed yet: it waits for a client instead of failing.
  EXPECT_TRUE(actions().empty());
  auto log = resume(conv);
  ASSERT_EQ(log->asks.size(), 1u);
  EXPECT_EQ(log->asks[0].item_id(), action.item_id);
  EXPECT_EQ(log->asks[0].turn_id(), action.turn_id);
  EXPECT_EQ(log->asks[0].raw_command, "touch never");
  EXPECT_EQ(log->asks[0].digest, action.digest);

  advance(29s);
  EXPECT_TRUE(actions().empty());
  EXPECT_TRUE(log->withdrawn.empty());

  advance(2s);  // fail closed: timed out, declined, stored before the turn goes on
  EXPECT_EQ(log->withdrawn, std::vector<uint64_t>{log->asks[0].key});
  auto decided = actions_at(phase::decided);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].outcome, "timed_out");
  EXPECT_EQ(decided[0].stage, "deadline");
  EXPECT_EQ(decided[0].deadline_ms, action.deadline_ms);
  EXPECT_TRUE(actions_at(phase::started).empty());
  auto items = stored_commands();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, protocol::item_status::declined);
  EXPECT_TRUE(saw(*log, "item/completed:command:declined"));
  // Asked twice: told the call timed out (it then says "next"), and after that.
  ASSERT_EQ(model_asked->size(), 2u);
  EXPECT_EQ(model_asked->front().step_results.back().what, step_result::kind::timed_out);
  EXPECT_TRUE(steps->empty());  // the model's next step ran
  EXPECT_EQ(log->seen.back(), "turn/completed");
  EXPECT_EQ(stored_turn_status(), protocol::turn_status::completed);
  EXPECT_EQ(svc.telemetry->counts().pending_asks, 0);
}

TEST_F(approval_restore_test, a_deadline_that_passed_while_the_server_was_down_times_out_at_once) {
  steps->push_back(test::say("next"));
  auto conv = start_conversation();
  auto log = resume(conv);  // a client is there, and still nobody is asked
  restore(conv, asked_with(-1s));

  EXPECT_TRUE(log->asks.empty());
  auto decided = actions_at(phase::decided);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].outcome, "timed_out");
  EXPECT_TRUE(actions_at(phase::started).empty());
  auto items = stored_commands();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, protocol::item_status::declined);
  // Asked twice: told the call timed out (it then says "next"), and after that.
  ASSERT_EQ(model_asked->size(), 2u);
  EXPECT_EQ(model_asked->front().step_results.back().what, step_result::kind::timed_out);
  EXPECT_EQ(stored_turn_status(), protocol::turn_status::completed);
}

TEST_F(approval_restore_test, two_answers_during_a_restore_decide_once_and_the_second_is_refused) {
  auto conv = start_conversation();
  auto action = asked_with(30s);
  restore(conv, action);
  auto first = resume(conv);
  auto second = resume(conv);
  ASSERT_EQ(first->asks.size(), 1u);
  ASSERT_EQ(second->asks.size(), 1u);
  EXPECT_EQ(first->asks[0].key, second->asks[0].key);  // one approval, asked twice

  // Both answers arrive before the approval has handled either, and the
  // decision then waits on the store.
  stored->hold_appends = true;
  auto refused_before = svc.telemetry->approvals.snapshot().refused_replies;
  send_answer(0, first->asks[0].key, protocol::approval_decision::accept());
  send_answer(1, second->asks[0].key, protocol::approval_decision::decline());
  run();
  auto decided = actions_at(phase::decided);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].decision, nlohmann::json(protocol::approval_decision::accept()));
  EXPECT_EQ(decided[0].decided_by, "connection#" + std::to_string(clients[0].id()));
  EXPECT_EQ(svc.telemetry->approvals.snapshot().refused_replies, refused_before + 1);
  EXPECT_TRUE(actions_at(phase::started).empty());  // nothing starts before the decision is stored

  // One outcome: the accept, started once (and held there: the command
  // would spawn once the store acknowledges its start).
  test::release_appends(*self, svc.store);
  run();
  EXPECT_EQ(actions_at(phase::decided).size(), 1u);
  ASSERT_EQ(actions_at(phase::started).size(), 1u);
  EXPECT_EQ(actions_at(phase::started)[0].item_id, action.item_id);
  EXPECT_EQ(svc.telemetry->counts().pending_asks, 0);
}

TEST_F(approval_restore_test, an_interrupt_while_a_restored_approval_waits_stores_it_cancelled) {
  auto conv = start_conversation();
  auto action = asked_with(30s);
  restore(conv, action);
  auto log = resume(conv);
  ASSERT_EQ(log->asks.size(), 1u);

  auto h = (*self)->request(conv, caf::infinite, atom::interrupt::value, action.turn_id);
  run();
  h.receive([](atom::ok) {}, [](caf::error& err) { FAIL() << caf::to_string(err); });

  EXPECT_EQ(log->withdrawn, std::vector<uint64_t>{log->asks[0].key});
  auto decided = actions_at(phase::decided);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].outcome, "cancelled");
  EXPECT_EQ(decided[0].stage, "interrupt");
  EXPECT_TRUE(actions_at(phase::started).empty());
  auto items = stored_commands();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, protocol::item_status::declined);
  EXPECT_EQ(stored_turn_status(), protocol::turn_status::interrupted);
  EXPECT_TRUE(model_asked->empty());  // an interrupted turn asks the model nothing more
}

TEST_F(approval_restore_test, an_interrupt_before_any_client_came_back_stores_it_cancelled) {
  auto conv = start_conversation();
  auto action = asked_with(30s);
  restore(conv, action);
  advance(10s);  // nobody resumes: it waits (neither fails nor times out)
  EXPECT_TRUE(actions().empty());
  auto h = (*self)->request(conv, caf::infinite, atom::interrupt::value, action.turn_id);
  run();
  h.receive([](atom::ok) {}, [](caf::error& err) { FAIL() << caf::to_string(err); });
  auto decided = actions_at(phase::decided);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].outcome, "cancelled");
  EXPECT_EQ(stored_turn_status(), protocol::turn_status::interrupted);
}

TEST_F(approval_restore_test, a_client_that_resumes_sees_the_item_start_before_it_is_asked_again) {
  // The item's start waits in the conversation's outbox behind a record the
  // store has not acknowledged yet (a rename here), when a client resumes
  // and is offered the approval that waits: it is asked only once the start
  // has left, as every client asked first is. (Asked directly, it got the
  // request first and the item/started after it.)
  auto conv = start_conversation();
  stored->hold_appends = true;
  protocol::thread_name_set_params rename;
  rename.name = "renamed while restoring";
  auto renamed = (*self)->request(conv, caf::infinite, atom::rename::value, rename);
  run();
  renamed.receive([](atom::ok) {}, [](caf::error& err) { FAIL() << caf::to_string(err); });
  auto action = asked_with(30s);
  restore(conv, action);
  auto log = resume(conv);
  EXPECT_TRUE(log->asks.empty()) << "asked before its item started: "
                                 << ::testing::PrintToString(log->seen);

  test::release_appends(*self, svc.store);
  run();
  const auto& seen = log->seen;
  auto position = [&](const char* what) {
    return std::find(seen.begin(), seen.end(), what) - seen.begin();
  };
  auto everything = static_cast<std::ptrdiff_t>(seen.size());
  ASSERT_LT(position("item/started"), everything) << ::testing::PrintToString(seen);
  ASSERT_LT(position("ask"), everything) << ::testing::PrintToString(seen);
  EXPECT_LT(position("item/started"), position("ask")) << ::testing::PrintToString(seen);
  ASSERT_EQ(log->asks.size(), 1u);  // asked once (the offer and the first ask are one prompt)
  EXPECT_EQ(log->asks[0].item_id(), action.item_id);
}

TEST_F(approval_restore_test, approval_latency_is_measured_on_the_actor_clock) {
  auto conv = start_conversation();
  restore(conv, asked_with(30s));
  auto log = resume(conv);
  ASSERT_EQ(log->asks.size(), 1u);
  advance(5s);
  send_answer(0, log->asks[0].key, protocol::approval_decision::decline());
  run();
  auto stats = svc.telemetry->approvals.snapshot();
  EXPECT_EQ(stats.decided, 1);
  // The histogram's buckets are within 6.25% of the time.
  EXPECT_GE(stats.p50_ms, 5000 * 0.93);
  EXPECT_LE(stats.p50_ms, 5000 * 1.07);
}

}  // namespace
}  // namespace parley
