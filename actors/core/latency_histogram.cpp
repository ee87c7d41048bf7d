#include "actors/core/latency_histogram.hpp"

namespace parley {

size_t latency_histogram::bucket_of(uint64_t micros) {
  if (micros < sub_buckets) return static_cast<size_t>(micros);
  // Power of two (exponent) plus the next log2(sub_buckets) bits below it.
  auto exponent = static_cast<size_t>(63 - __builtin_clzll(micros));
  auto shift = exponent - 4;  // log2(sub_buckets) == 4
  auto sub = static_cast<size_t>((micros >> shift) & (sub_buckets - 1));
  auto b = (exponent - 3) * sub_buckets + sub;
  return b < buckets ? b : buckets - 1;
}

uint64_t latency_histogram::upper_bound_of(size_t bucket) {
  if (bucket < sub_buckets) return bucket;
  auto exponent = bucket / sub_buckets + 3;
  auto sub = bucket % sub_buckets;
  auto shift = exponent - 4;
  return ((uint64_t{sub_buckets} + sub + 1) << shift) - 1;
}

void latency_histogram::record(std::chrono::steady_clock::duration d) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  auto clamped = static_cast<uint64_t>(micros < 0 ? 0 : micros);
  micros_sum_.fetch_add(clamped, std::memory_order_relaxed);
  counts_[bucket_of(clamped)].fetch_add(1, std::memory_order_relaxed);
}

double latency_histogram::quantile_ms(double q) const {
  std::array<uint64_t, buckets> counts{};
  uint64_t total = 0;
  for (size_t i = 0; i < buckets; ++i)
    total += counts[i] = counts_[i].load(std::memory_order_relaxed);
  if (total == 0) return 0.0;
  auto rank = static_cast<uint64_t>(q * static_cast<double>(total - 1)) + 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return static_cast<double>(upper_bound_of(i)) / 1000.0;
  }
  return static_cast<double>(upper_bound_of(buckets - 1)) / 1000.0;
}

latency_histogram::cumulative latency_histogram::over(
    const std::vector<double>& bounds_seconds) const {
  cumulative h;
  h.counts.assign(bounds_seconds.size(), 0);
  for (size_t i = 0; i < buckets; ++i) {
    auto n = counts_[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    h.count += n;
    auto upper_seconds = static_cast<double>(upper_bound_of(i)) / 1e6;
    for (size_t b = 0; b < bounds_seconds.size(); ++b)
      if (upper_seconds <= bounds_seconds[b]) h.counts[b] += n;
  }
  h.sum_seconds = static_cast<double>(micros_sum_.load(std::memory_order_relaxed)) / 1e6;
  return h;
}

}  // namespace parley
