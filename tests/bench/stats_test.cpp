#include "bench/harness/stats.hpp"

#include <gtest/gtest.h>

namespace parley::bench {
namespace {

TEST(stats, nearest_rank_percentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  auto s = summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.max, 100);
}

TEST(stats, small_and_empty_samples) {
  auto one = summarize({7});
  EXPECT_EQ(one.p50, 7);
  EXPECT_EQ(one.p99, 7);
  auto none = summarize({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.max, 0);
  EXPECT_EQ(percentile_sorted({1, 2, 3, 4}, 50), 2);
  EXPECT_EQ(percentile_sorted({1, 2, 3, 4}, 0), 1);
}

}  // namespace
}  // namespace parley::bench
