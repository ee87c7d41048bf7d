#pragma once
// A lock-free histogram of durations (approval decisions, model requests,
// store writes): log-linear buckets of microseconds, 16 per power of two,
// so a figure read from it is off by at most a sixteenth. Any actor records
// into it on its own thread; readers (parley/stats, GET /metrics) take the
// counts as they are, never waiting on a writer.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace parley {

class latency_histogram {
 public:
  void record(std::chrono::steady_clock::duration d);

  /// The `q` quantile (0..1) in milliseconds: the upper end of the bucket
  /// that holds it; 0 with nothing recorded.
  double quantile_ms(double q) const;

  /// Cumulative counts over `bounds_seconds` (ascending; the reader adds
  /// +Inf): a duration counts under a bound when its whole bucket lies
  /// below it, so a count is off by at most one bucket's width (6.25%).
  struct cumulative {
    std::vector<uint64_t> counts;  // one per bound
    uint64_t count = 0;
    double sum_seconds = 0;
  };
  cumulative over(const std::vector<double>& bounds_seconds) const;

  /// Bucket of a duration in microseconds, and the largest duration it
  /// holds (exposed for tests).
  static size_t bucket_of(uint64_t micros);
  static uint64_t upper_bound_of(size_t bucket);

 private:
  static constexpr size_t sub_buckets = 16;  // per power of two: <= 6.25% error
  static constexpr size_t buckets = 48 * sub_buckets;

  std::atomic<uint64_t> micros_sum_{0};
  std::array<std::atomic<uint64_t>, buckets> counts_{};
};

}  // namespace parley
