// The order a thread's events leave in: posted actions run in order, a held
// one holds back everything behind it until it is released.

#include "actors/threads/event_outbox.hpp"

#include <gtest/gtest.h>
#include <string>

namespace parley {
namespace {

TEST(EventOutbox, posted_actions_run_at_once_and_in_order) {
  event_outbox box;
  std::string seen;
  box.post([&] { seen += "a"; });
  box.post([&] { seen += "b"; });
  EXPECT_EQ(seen, "ab");
  EXPECT_TRUE(box.empty());
}

TEST(EventOutbox, a_held_action_holds_back_everything_behind_it) {
  event_outbox box;
  std::string seen;
  auto first = box.post_held([&] { seen += "1"; });
  box.post([&] { seen += "2"; });
  auto third = box.post_held([&] { seen += "3"; });
  box.post([&] { seen += "4"; });
  EXPECT_EQ(seen, "");
  box.release(third);  // acknowledged out of order: still waits for the first
  EXPECT_EQ(seen, "");
  box.release(first);
  EXPECT_EQ(seen, "1234");
  EXPECT_TRUE(box.empty());
  box.release(first);  // already run: nothing happens
  EXPECT_EQ(seen, "1234");
}

TEST(EventOutbox, a_dropped_action_never_runs_and_lets_the_rest_go) {
  event_outbox box;
  std::string seen;
  auto first = box.post_held([&] { seen += "1"; });
  box.post([&] { seen += "2"; });
  box.drop(first);  // what it would report was not stored
  EXPECT_EQ(seen, "2");
  EXPECT_TRUE(box.empty());
}

TEST(EventOutbox, an_action_that_posts_queues_behind_what_is_ready) {
  event_outbox box;
  std::string seen;
  auto held = box.post_held([&] {
    seen += "a";
    box.post([&] { seen += "c"; });  // from inside: after "b", not before
  });
  box.post([&] { seen += "b"; });
  box.release(held);
  EXPECT_EQ(seen, "abc");
}

TEST(EventOutbox, an_action_run_at_once_that_posts_finishes_before_what_it_posted) {
  event_outbox box;
  std::string seen;
  uint64_t held = 0;
  box.post([&] {
    seen += "a";
    box.post([&] { seen += "c"; });  // queued behind this one, not run inside it
    held = box.post_held([&] { seen += "d"; });
    box.post([&] { seen += "e"; });  // behind the held one
    seen += "b";
  });
  EXPECT_EQ(seen, "abc");
  EXPECT_FALSE(box.empty());
  box.release(held);
  EXPECT_EQ(seen, "abcde");
  EXPECT_TRUE(box.empty());
}

TEST(EventOutbox, a_box_emptied_takes_new_actions_and_ignores_old_seqs) {
  event_outbox box;
  std::string seen;
  auto old = box.post_held([&] { seen += "1"; });
  box.release(old);
  ASSERT_TRUE(box.empty());
  auto next = box.post_held([&] { seen += "2"; });
  EXPECT_NE(next, old);
  box.post([&] { seen += "3"; });
  box.release(old);  // run already: the new held one still waits
  EXPECT_EQ(seen, "1");
  box.drop(old);
  EXPECT_EQ(seen, "1");
  EXPECT_EQ(box.size(), 2u);
  box.release(next);
  EXPECT_EQ(seen, "123");
  EXPECT_TRUE(box.empty());
}

}  // namespace
}  // namespace parley
