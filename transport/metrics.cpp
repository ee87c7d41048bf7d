#include "transport/metrics.hpp"

#include <atomic>
#include <vector>

#include "transport/metrics_text.hpp"

namespace parley {

namespace {

double now_of(const std::atomic<int64_t>& a) {
  return static_cast<double>(a.load(std::memory_order_relaxed));
}

/// Decision latency bounds, seconds: a rule decides in microseconds, a
/// person in seconds to minutes, a deadline after up to hours.
const std::vector<double> decision_bounds = {0.0001, 0.001, 0.01, 0.1, 0.5, 1,    2.5,
                                             5,      10,    30,   60,  300, 900, 3600};

}  // namespace

std::string render_metrics(const runtime_telemetry& t) {
  metrics::exposition out;
  auto a = t.approvals.snapshot();
  out.counter("parley_approvals_requested_total", "Approvals requested since start.",
              static_cast<double>(a.requested));
  out.counter("parley_approvals_total", "Approvals ended since start, by outcome.",
              {{{{"outcome", "allowed"}}, static_cast<double>(a.allowed)},
               {{{"outcome", "denied"}}, static_cast<double>(a.denied)},
               {{{"outcome", "timed_out"}}, static_cast<double>(a.timed_out)},
               {{{"outcome", "cancelled"}}, static_cast<double>(a.cancelled)},
               {{{"outcome", "failed"}}, static_cast<double>(a.failed)}});
  out.counter("parley_approval_decisions_total",
              "Approvals decided since start, by the stage that decided.",
              {{{{"stage", "rules"}}, static_cast<double>(a.by_rules)},
               {{{"stage", "grants"}}, static_cast<double>(a.by_grants)},
               {{{"stage", "hooks"}}, static_cast<double>(a.by_hooks)},
               {{{"stage", "client"}}, static_cast<double>(a.by_client)}});
  auto h = t.approvals.latency(decision_bounds);
  out.histogram("parley_approval_decision_seconds",
                "Time from an approval's request to its outcome (any outcome).", decision_bounds,
                h.cumulative, h.count, h.sum_seconds);
  out.gauge("parley_approvals_pending", "Approvals waiting for an outcome now.",
            static_cast<double>(a.pending));
  out.counter("parley_approval_refused_replies_total",
              "Approval replies ignored as late, duplicate or foreign.",
              static_cast<double>(a.refused_replies));
  out.gauge("parley_threads_loaded", "Threads loaded in memory now.", now_of(t.live.conversations));
  out.gauge("parley_turns_running", "Turns running now.", now_of(t.live.turns));
  out.gauge("parley_processes_running", "Command processes running now.",
            now_of(t.live.processes));
  out.gauge("parley_store_writable", "1 while the store can write, 0 while it cannot.",
            t.store.writable() ? 1 : 0);
  out.gauge("parley_connections", "Listener connections open now (health checks included).",
            now_of(t.connections.open));
  out.gauge("parley_sessions", "WebSocket sessions open now.", now_of(t.connections.sessions));
  out.gauge("parley_queued_bytes",
            "Bytes written to WebSocket clients and not yet taken by their sockets.",
            now_of(t.connections.queued_bytes));
  std::vector<metrics::sample> refusals;
  for (const auto& [reason, n] : t.limits.snapshot())
    refusals.push_back({{{"reason", reason}}, static_cast<double>(n)});
  out.counter("parley_limit_refusals_total",
              "Requests and connections refused because a limit was reached, by reason.",
              refusals);
  return out.text();
}

}  // namespace parley
