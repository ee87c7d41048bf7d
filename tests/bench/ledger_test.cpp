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

}  // namespace
}  // namespace parley::bench
