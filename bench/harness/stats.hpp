#pragma once
// Latency statistics for the harness: nearest-rank percentiles.

#include <cstddef>
#include <vector>

namespace parley::bench {

struct percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  size_t count = 0;
};

/// Nearest-rank percentiles of `samples` (copied and sorted); zeros if empty.
percentiles summarize(std::vector<double> samples);

/// The nearest-rank percentile `p` (0..100) of sorted samples.
double percentile_sorted(const std::vector<double>& sorted, double p);

}  // namespace parley::bench
