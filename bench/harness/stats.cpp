#include "bench/harness/stats.hpp"

#include <algorithm>
#include <cmath>

namespace parley::bench {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

percentiles summarize(std::vector<double> samples) {
  percentiles out;
  out.count = samples.size();
  if (samples.empty()) return out;
  std::sort(samples.begin(), samples.end());
  out.p50 = percentile_sorted(samples, 50);
  out.p90 = percentile_sorted(samples, 90);
  out.p99 = percentile_sorted(samples, 99);
  out.max = samples.back();
  return out;
}

}  // namespace parley::bench
