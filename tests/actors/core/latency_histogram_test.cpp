// The shared duration histogram: bucket bounds within a sixteenth, quantiles
// and cumulative counts over Prometheus bounds as a reader sees them.

#include "actors/core/latency_histogram.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(latency_histogram, buckets_bound_durations_within_a_sixteenth) {
  for (uint64_t v : {0ull, 1ull, 15ull, 16ull, 17ull, 100ull, 1000ull, 123456ull, 98765432ull}) {
    auto b = latency_histogram::bucket_of(v);
    auto upper = latency_histogram::upper_bound_of(b);
    EXPECT_GE(upper, v);
    EXPECT_LE(static_cast<double>(upper), static_cast<double>(v) * 1.0625 + 1) << v;
    if (b > 0) {
      EXPECT_LT(latency_histogram::upper_bound_of(b - 1), v) << v;
    }
  }
}

TEST(latency_histogram, an_empty_one_reads_zero) {
  latency_histogram h;
  EXPECT_EQ(h.quantile_ms(0.5), 0.0);
  auto c = h.over({0.001, 1});
  EXPECT_EQ(c.count, 0u);
  EXPECT_EQ(c.counts, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(c.sum_seconds, 0.0);
}

TEST(latency_histogram, quantiles_and_cumulative_counts_follow_what_was_recorded) {
  latency_histogram h;
  for (int i = 0; i < 98; ++i) h.record(milliseconds(2));
  h.record(milliseconds(300));
  h.record(std::chrono::seconds(4));
  EXPECT_NEAR(h.quantile_ms(0.5), 2.0, 2.0 / 16);
  EXPECT_NEAR(h.quantile_ms(0.99), 300.0, 300.0 / 16);
  EXPECT_NEAR(h.quantile_ms(1.0), 4000.0, 4000.0 / 16);
  auto c = h.over({0.001, 0.0025, 0.5, 5});
  EXPECT_EQ(c.count, 100u);
  EXPECT_EQ(c.counts, (std::vector<uint64_t>{0, 98, 99, 100}));
  EXPECT_NEAR(c.sum_seconds, 98 * 0.002 + 0.3 + 4, 1e-6);
}

TEST(latency_histogram, a_negative_duration_counts_as_zero) {
  latency_histogram h;
  h.record(microseconds(-5));
  auto c = h.over({0.000001});
  EXPECT_EQ(c.count, 1u);
  EXPECT_EQ(c.counts[0], 1u);
}

}  // namespace
}  // namespace parley
