#pragma once
// One runtime's approval telemetry for `parley/stats`: how many approvals are
// pending, how they ended and which stage decided them, and the time from
// request to decision (p50/p99 from a log-linear histogram). Lock-free: every
// approval actor records into it, readers take a snapshot.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/core/latency_histogram.hpp"

namespace parley {

struct approval_stats_snapshot {
  int64_t requested = 0;
  int64_t pending = 0;
  int64_t decided = 0;   // ended with a decision (any stage)
  int64_t allowed = 0;   // ... that lets the action run
  int64_t denied = 0;    // ... that does not
  int64_t timed_out = 0;
  int64_t cancelled = 0;  // interrupted, withdrawn, client gone
  int64_t failed = 0;     // client error or malformed reply
  int64_t refused_replies = 0;  // replies ignored as late, duplicate or foreign
  int64_t by_rules = 0, by_grants = 0, by_hooks = 0, by_client = 0;
  double p50_ms = 0;  // time from request to outcome
  double p99_ms = 0;
};
void to_json(nlohmann::json& j, const approval_stats_snapshot& x);

class approval_stats {
 public:
  void on_requested();
  /// `stage`: "rules", "grants", "hook:<name>", "client", "deadline", "interrupt", ...
  void on_outcome(const std::string& how, const std::string& stage, bool allowed,
                  std::chrono::steady_clock::duration latency);
  void on_refused_reply();
  approval_stats_snapshot snapshot() const;

  /// The time from request to outcome (any outcome).
  const latency_histogram& latency() const { return latency_; }

 private:
  std::atomic<int64_t> requested_{0}, finished_{0}, decided_{0}, allowed_{0}, denied_{0},
      timed_out_{0}, cancelled_{0}, failed_{0}, refused_{0};
  std::atomic<int64_t> by_rules_{0}, by_grants_{0}, by_hooks_{0}, by_client_{0};
  latency_histogram latency_;
};

}  // namespace parley
