#include "actors/core/telemetry.hpp"

namespace parley {

runtime_counts runtime_telemetry::counts() const {
  runtime_counts r;
  r.conversations = live.conversations.load();
  r.turns = live.turns.load();
  r.approvals = live.approvals.load();
  r.execs = live.execs.load();
  r.pending_asks = live.pending_asks.load();
  r.pending_requests = live.pending_requests.load();
  r.processes = live.processes.load();
  return r;
}

counted count_live(const std::shared_ptr<runtime_telemetry>& t,
                   std::atomic<int64_t> live_counters::*which) {
  if (!t) return {};
  // Aliasing: points at the counter, owns the whole telemetry.
  return counted{std::shared_ptr<std::atomic<int64_t>>(t, &(t->live.*which))};
}

}  // namespace parley
