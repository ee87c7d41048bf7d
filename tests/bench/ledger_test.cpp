#include "bench/harness/ledger.hpp"

#include <gtest/gtest.h>

namespace parley::bench {
namespace {

bool mentions(const ledger& l, const std::string& text) {
  for (auto& v : l.violations())
    if (v.find(text) != std::string::npos) return true;
  return false;
}

TEST(ledger, a_clean_run_has_no_violations) {
  ledger l;
  l.thread_started("A");
  l.turn_started("A", "a1");
  l.event("item/started", "A", "a1");
  l.approval_requested("0", "A", "a1");
  l.approval_resolved("0", "A");
  l.turn_completed("A", "a1");
  l.finish();
  EXPECT_TRUE(l.violations().empty());
  EXPECT_EQ(l.approvals(), 1u);
  EXPECT_EQ(l.turns_completed(), 1u);
}

TEST(ledger, double_and_missing_resolutions) {
  ledger l;
  l.thread_started("A");
  l.turn_started("A", "a1");
  l.approval_requested("0", "A", "a1");
  l.approval_requested("1", "A", "a1");
  l.approval_resolved("0", "A");
  l.approval_resolved("0", "A");
  l.approval_resolved("9", "A");
  l.finish();
  EXPECT_TRUE(mentions(l, "approval 0 resolved twice"));
  EXPECT_TRUE(mentions(l, "approval 1 never resolved"));
  EXPECT_TRUE(mentions(l, "unknown request 9"));
  EXPECT_TRUE(mentions(l, "1 turn(s) never completed"));
}

TEST(ledger, crossed_ids_are_caught) {
  ledger l;
  l.thread_started("A");
  l.thread_started("B");
  l.turn_started("A", "a1");
  l.turn_started("B", "b1");
  l.event("item/started", "A", "b1");
  l.event("item/started", "C", "");
  l.approval_requested("0", "A", "a1");
  l.approval_resolved("0", "B");
  l.turn_completed("A", "a1");
  l.turn_completed("A", "a1");
  EXPECT_TRUE(mentions(l, "names turn b1 but thread A runs a1"));
  EXPECT_TRUE(mentions(l, "does not own: C"));
  EXPECT_TRUE(mentions(l, "resolved for thread B, asked for A"));
  EXPECT_TRUE(mentions(l, "completed twice"));
}

TEST(ledger, a_joined_connections_copies_are_not_violations) {
  ledger l;
  l.thread_started("A", 0);
  l.thread_joined("A", 1);
  l.turn_started("A", "a1", 0);  // the owner's turn/start reply
  l.turn_started("A", "a1", 1);  // turn/started on the joined connection
  for (int c : {0, 1}) {
    l.event("item/started", "A", "a1", c);
    l.approval_requested(std::to_string(c), "A", "a1", c, "call_1");
    l.approval_resolved(std::to_string(c), "A", c);
    l.item_completed("A", "call_1", c);
    l.turn_completed("A", "a1", c);
  }
  l.finish();
  EXPECT_TRUE(l.violations().empty()) << l.violations().front();
  EXPECT_EQ(l.approvals(), 1u);
  EXPECT_EQ(l.approval_requests(), 2u);
  EXPECT_EQ(l.turns_completed(), 1u);
}

TEST(ledger, one_connection_resolving_or_completing_twice_is_a_violation) {
  ledger l;
  l.thread_started("A", 0);
  l.thread_joined("A", 1);
  l.turn_started("A", "a1", 0);
  l.turn_started("A", "a1", 1);
  l.approval_requested("0", "A", "a1", 0, "call_1");
  l.approval_requested("1", "A", "a1", 1, "call_1");
  l.approval_resolved("0", "A", 0);
  l.approval_resolved("1", "A", 1);
  l.approval_resolved("1", "A", 1);
  l.item_completed("A", "call_1", 1);
  l.item_completed("A", "call_1", 1);
  l.event("item/started", "A", "a1", 2);
  l.approval_resolved("0", "A", 2);
  l.turn_completed("A", "a1", 0);
  l.turn_completed("A", "a1", 1);
  l.turn_completed("A", "a1", 1);
  l.finish();
  EXPECT_TRUE(mentions(l, "approval 1 resolved twice on connection 1"));
  EXPECT_TRUE(mentions(l, "item call_1 of thread A completed twice on connection 1"));
  EXPECT_TRUE(mentions(l, "does not own: A on connection 2"));
  EXPECT_TRUE(mentions(l, "unknown request 0 on connection 2"));
  EXPECT_TRUE(mentions(l, "item A/call_1 asked for approval never completed"));  // on the owner
  EXPECT_TRUE(mentions(l, "turn a1 completed twice on connection 1"));
  EXPECT_FALSE(mentions(l, "approval 0 resolved twice"));
  EXPECT_EQ(l.turns_completed(), 1u);
}

TEST(ledger, a_turn_completed_only_on_a_joined_connection_never_completed) {
  ledger l;
  l.thread_started("A", 0);
  l.thread_joined("A", 1);
  l.turn_started("A", "a1", 0);
  l.turn_started("A", "a1", 1);
  l.turn_completed("A", "a1", 1);
  l.finish();
  EXPECT_TRUE(mentions(l, "1 turn(s) never completed"));
  EXPECT_EQ(l.turns_completed(), 0u);
}

}  // namespace
}  // namespace parley::bench
