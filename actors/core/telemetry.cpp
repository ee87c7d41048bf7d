#include "actors/core/telemetry.hpp"

#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"

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

caf::expected<usage_grant> acquire_usage(const std::shared_ptr<runtime_telemetry>& t,
                                         usage_kind kind, const std::string& tenant,
                                         uint64_t connection, const usage_limits& limits) {
  if (!t) return usage_grant{};
  std::string reason;
  auto grant = t->usage->acquire(kind, tenant, connection, limits, &reason);
  if (!grant) {
    t->limits.count(reason);
    PARLEY_INFO("limits event=refused reason={} tenant={} connection={} message=\"{}\"", reason,
                tenant, connection, message_of(grant.error()));
  }
  return grant;
}

}  // namespace parley
