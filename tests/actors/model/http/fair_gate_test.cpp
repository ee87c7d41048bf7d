// The provider cap's queue: never more than the cap running, waiting
// requests start round-robin over tenants and then threads, aborts free
// their place.

#include "actors/model/http/fair_gate.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace parley::http {
namespace {

using ids = std::vector<fair_gate::id_type>;

TEST(FairGate, StartsUpToTheCapThenQueues) {
  fair_gate g;
  EXPECT_TRUE(g.arrive("p", 2, {"", "a"}, 1));
  EXPECT_TRUE(g.arrive("p", 2, {"", "b"}, 2));
  EXPECT_FALSE(g.arrive("p", 2, {"", "c"}, 3));
  EXPECT_EQ(g.running("p"), 2u);
  EXPECT_EQ(g.waiting("p"), 1u);
  EXPECT_EQ(g.leave(1), ids{3});
  EXPECT_EQ(g.running("p"), 2u);
  EXPECT_EQ(g.waiting("p"), 0u);
  EXPECT_EQ(g.leave(2), ids{});
  EXPECT_EQ(g.leave(3), ids{});
  EXPECT_EQ(g.running("p"), 0u);
}

TEST(FairGate, GatesAreIndependentAndZeroMeansNoCap) {
  fair_gate g;
  EXPECT_TRUE(g.arrive("local", 1, {"", "a"}, 1));
  EXPECT_FALSE(g.arrive("local", 1, {"", "a"}, 2));
  EXPECT_TRUE(g.arrive("remote", 1, {"", "a"}, 3));
  for (fair_gate::id_type id = 10; id < 20; ++id) EXPECT_TRUE(g.arrive("open", 0, {"", "a"}, id));
  EXPECT_EQ(g.running("open"), 10u);
}

TEST(FairGate, RoundRobinOverThreadsNotArrivalOrder) {
  fair_gate g;
  ASSERT_TRUE(g.arrive("p", 1, {"", "busy"}, 1));
  // A thread with many requests waiting, then two others with one each.
  for (fair_gate::id_type id = 2; id <= 5; ++id) EXPECT_FALSE(g.arrive("p", 1, {"", "busy"}, id));
  EXPECT_FALSE(g.arrive("p", 1, {"", "quiet1"}, 6));
  EXPECT_FALSE(g.arrive("p", 1, {"", "quiet2"}, 7));
  ids order;
  fair_gate::id_type done = 1;
  for (int k = 0; k < 6; ++k) {
    auto next = g.leave(done);
    ASSERT_EQ(next.size(), 1u);
    order.push_back(next[0]);
    done = next[0];
  }
  EXPECT_EQ(order, (ids{2, 6, 7, 3, 4, 5}));
}

TEST(FairGate, RoundRobinOverTenantsFirst) {
  fair_gate g;
  ASSERT_TRUE(g.arrive("p", 1, {"t1", "x"}, 1));
  // Tenant t1 has three threads waiting, t2 one.
  EXPECT_FALSE(g.arrive("p", 1, {"t1", "a"}, 2));
  EXPECT_FALSE(g.arrive("p", 1, {"t1", "b"}, 3));
  EXPECT_FALSE(g.arrive("p", 1, {"t1", "c"}, 4));
  EXPECT_FALSE(g.arrive("p", 1, {"t2", "d"}, 5));
  ids order;
  fair_gate::id_type done = 1;
  for (int k = 0; k < 4; ++k) {
    auto next = g.leave(done);
    ASSERT_EQ(next.size(), 1u);
    order.push_back(next[0]);
    done = next[0];
  }
  EXPECT_EQ(order, (ids{2, 5, 3, 4}));
}

TEST(FairGate, AWaitingRequestThatLeavesFreesNoSlotAndIsNeverStarted) {
  fair_gate g;
  ASSERT_TRUE(g.arrive("p", 1, {"", "a"}, 1));
  EXPECT_FALSE(g.arrive("p", 1, {"", "b"}, 2));
  EXPECT_FALSE(g.arrive("p", 1, {"", "c"}, 3));
  EXPECT_EQ(g.leave(2), ids{});  // aborted while waiting
  EXPECT_EQ(g.running("p"), 1u);
  EXPECT_EQ(g.waiting("p"), 1u);
  EXPECT_EQ(g.leave(1), ids{3});
  EXPECT_EQ(g.leave(42), ids{});  // unknown
}

TEST(FairGate, ANewcomerDoesNotJumpTheQueue) {
  fair_gate g;
  ASSERT_TRUE(g.arrive("p", 1, {"", "a"}, 1));
  EXPECT_FALSE(g.arrive("p", 1, {"", "b"}, 2));
  // The limit grows: a newcomer still waits behind 2 until a slot frees.
  EXPECT_FALSE(g.arrive("p", 2, {"", "c"}, 3));
  EXPECT_EQ(g.leave(1), (ids{2, 3}));
}

}  // namespace
}  // namespace parley::http
