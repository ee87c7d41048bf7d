#include "actors/core/config.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

TEST(config, parses_durations) {
  std::chrono::milliseconds d{};
  ASSERT_TRUE(parse_duration("600", d));
  EXPECT_EQ(d.count(), 600'000);
  ASSERT_TRUE(parse_duration("250ms", d));
  EXPECT_EQ(d.count(), 250);
  ASSERT_TRUE(parse_duration("2m", d));
  EXPECT_EQ(d.count(), 120'000);
  ASSERT_TRUE(parse_duration("1h", d));
  EXPECT_EQ(d.count(), 3'600'000);
  for (auto bad : {"", "ms", "10x", "-5s", "1.5s"}) EXPECT_FALSE(parse_duration(bad, d)) << bad;
}

}  // namespace
}  // namespace parley
