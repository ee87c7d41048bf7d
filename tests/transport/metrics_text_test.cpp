// The Prometheus text encoder and the JSON log's key=value parser (issue 22);
// the whole exposition and the JSON lines are checked through the real
// binary by tests/transport/operations_test.py.

#include <gtest/gtest.h>

#include <limits>

#include "actors/core/log_json.hpp"
#include "transport/metrics_text.hpp"

namespace parley {
namespace {

TEST(MetricsText, EscapesLabelValues) {
  EXPECT_EQ(metrics::escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(MetricsText, FormatsValues) {
  EXPECT_EQ(metrics::format_value(3), "3");
  EXPECT_EQ(metrics::format_value(0.005), "0.005");
  EXPECT_EQ(metrics::format_value(0.1), "0.1");
  EXPECT_EQ(metrics::format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(metrics::format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(MetricsText, WritesFamiliesWithHelpAndType) {
  metrics::exposition out;
  out.counter("parley_x_total", "Xs.", {{{{"reason", "a\"b"}}, 2}});
  out.gauge("parley_y", "Line\nbreak.", 1.5);
  out.histogram("parley_z_seconds", "Zs.", {0.1, 1}, {1, 3}, 4, 2.25);
  EXPECT_EQ(out.text(),
            "# HELP parley_x_total Xs.\n# TYPE parley_x_total counter\n"
            "parley_x_total{reason=\"a\\\"b\"} 2\n"
            "# HELP parley_y Line\\nbreak.\n# TYPE parley_y gauge\nparley_y 1.5\n"
            "# HELP parley_z_seconds Zs.\n# TYPE parley_z_seconds histogram\n"
            "parley_z_seconds_bucket{le=\"0.1\"} 1\nparley_z_seconds_bucket{le=\"1\"} 3\n"
            "parley_z_seconds_bucket{le=\"+Inf\"} 4\nparley_z_seconds_sum 2.25\n"
            "parley_z_seconds_count 4\n");
}

TEST(LogJson, ParsesKeyValuePairs) {
  auto f = log::parse_fields(
      "ws event=connected client=\"a b \\\"c\\\"\" prose words thread=t1 (x=1 y) n=42");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0], std::make_pair(std::string("event"), std::string("connected")));
  EXPECT_EQ(f[1], std::make_pair(std::string("client"), std::string("a b \"c\"")));
  EXPECT_EQ(f[2], std::make_pair(std::string("thread"), std::string("t1")));
  // "(x=1" is prose, not a pair: a key starts a word.
  EXPECT_EQ(f[3], std::make_pair(std::string("n"), std::string("42")));
}

}  // namespace
}  // namespace parley
