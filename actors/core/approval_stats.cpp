#include "actors/core/approval_stats.hpp"

namespace parley {

namespace {
constexpr auto relaxed = std::memory_order_relaxed;
}

void to_json(nlohmann::json& j, const approval_stats_snapshot& x) {
  j = nlohmann::json{{"requested", x.requested},
                     {"pending", x.pending},
                     {"decided", x.decided},
                     {"allowed", x.allowed},
                     {"denied", x.denied},
                     {"timedOut", x.timed_out},
                     {"cancelled", x.cancelled},
                     {"failed", x.failed},
                     {"refusedReplies", x.refused_replies},
                     {"decidedBy",
                      {{"rules", x.by_rules},
                       {"grants", x.by_grants},
                       {"hooks", x.by_hooks},
                       {"client", x.by_client}}},
                     {"timeToDecisionMs", {{"p50", x.p50_ms}, {"p99", x.p99_ms}}}};
}

size_t approval_stats::bucket_of(uint64_t micros) {
  if (micros < sub_buckets) return static_cast<size_t>(micros);
  // Power of two (exponent) plus the next log2(sub_buckets) bits below it.
  auto exponent = static_cast<size_t>(63 - __builtin_clzll(micros));
  auto shift = exponent - 4;  // log2(sub_buckets) == 4
  auto sub = static_cast<size_t>((micros >> shift) & (sub_buckets - 1));
  auto b = (exponent - 3) * sub_buckets + sub;
  return b < buckets ? b : buckets - 1;
}

uint64_t approval_stats::upper_bound_of(size_t bucket) {
  if (bucket < sub_buckets) return bucket;
  auto exponent = bucket / sub_buckets + 3;
  auto sub = bucket % sub_buckets;
  auto shift = exponent - 4;
  return ((uint64_t{sub_buckets} + sub + 1) << shift) - 1;
}

void approval_stats::on_requested() { requested_.fetch_add(1, relaxed); }

void approval_stats::on_refused_reply() { refused_.fetch_add(1, relaxed); }

void approval_stats::on_outcome(const std::string& how, const std::string& stage, bool allowed,
                                std::chrono::steady_clock::duration latency) {
  if (how == "decided") {
    decided_.fetch_add(1, relaxed);
    (allowed ? allowed_ : denied_).fetch_add(1, relaxed);
    if (stage == "rules")
      by_rules_.fetch_add(1, relaxed);
    else if (stage == "grants")
      by_grants_.fetch_add(1, relaxed);
    else if (stage.rfind("hook", 0) == 0)
      by_hooks_.fetch_add(1, relaxed);
    else
      by_client_.fetch_add(1, relaxed);
  } else if (how == "timed_out") {
    timed_out_.fetch_add(1, relaxed);
  } else if (how == "client_error" || how == "malformed") {
    failed_.fetch_add(1, relaxed);
  } else {
    cancelled_.fetch_add(1, relaxed);
  }
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(latency).count();
  auto clamped = static_cast<uint64_t>(micros < 0 ? 0 : micros);
  latency_micros_sum_.fetch_add(clamped, relaxed);
  histogram_[bucket_of(clamped)].fetch_add(1, relaxed);
  finished_.fetch_add(1, relaxed);
}

approval_stats_snapshot approval_stats::snapshot() const {
  approval_stats_snapshot s;
  s.requested = requested_.load(relaxed);
  auto finished = finished_.load(relaxed);
  s.pending = s.requested > finished ? s.requested - finished : 0;
  s.decided = decided_.load(relaxed);
  s.allowed = allowed_.load(relaxed);
  s.denied = denied_.load(relaxed);
  s.timed_out = timed_out_.load(relaxed);
  s.cancelled = cancelled_.load(relaxed);
  s.failed = failed_.load(relaxed);
  s.refused_replies = refused_.load(relaxed);
  s.by_rules = by_rules_.load(relaxed);
  s.by_grants = by_grants_.load(relaxed);
  s.by_hooks = by_hooks_.load(relaxed);
  s.by_client = by_client_.load(relaxed);
  std::array<uint64_t, buckets> counts{};
  uint64_t total = 0;
  for (size_t i = 0; i < buckets; ++i) total += counts[i] = histogram_[i].load(relaxed);
  auto percentile = [&](double q) {
    if (total == 0) return 0.0;
    auto rank = static_cast<uint64_t>(q * static_cast<double>(total - 1)) + 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < buckets; ++i) {
      seen += counts[i];
      if (seen >= rank) return static_cast<double>(upper_bound_of(i)) / 1000.0;
    }
    return static_cast<double>(upper_bound_of(buckets - 1)) / 1000.0;
  };
  s.p50_ms = percentile(0.50);
  s.p99_ms = percentile(0.99);
  return s;
}

approval_stats::latency_histogram approval_stats::latency(
    const std::vector<double>& bounds_seconds) const {
  latency_histogram h;
  h.cumulative.assign(bounds_seconds.size(), 0);
  for (size_t i = 0; i < buckets; ++i) {
    auto n = histogram_[i].load(relaxed);
    if (n == 0) continue;
    h.count += n;
    auto upper_seconds = static_cast<double>(upper_bound_of(i)) / 1e6;
    for (size_t b = 0; b < bounds_seconds.size(); ++b)
      if (upper_seconds <= bounds_seconds[b]) h.cumulative[b] += n;
  }
  h.sum_seconds = static_cast<double>(latency_micros_sum_.load(relaxed)) / 1e6;
  return h;
}

}  // namespace parley
