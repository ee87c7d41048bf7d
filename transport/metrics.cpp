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

/// Model request bounds, seconds: a local model answers its first bytes in
/// milliseconds, a remote one's whole answer may take minutes.
const std::vector<double> model_bounds = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,  2.5,
                                          5,    10,    30,   60,  120,  300, 600};

/// Store write bounds, seconds: a group commit's sync is tens of
/// microseconds on a fast disk, hundreds of milliseconds on a busy one.
const std::vector<double> store_bounds = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                          0.005,   0.01,   0.025,   0.05,   0.1,   0.25,
                                          0.5,     1,      2.5};

void histogram_of(metrics::exposition& out, std::string_view name, std::string_view help,
                  const latency_histogram& h, const std::vector<double>& bounds) {
  auto c = h.over(bounds);
  out.histogram(name, help, bounds, c.counts, c.count, c.sum_seconds);
}

double load(const std::atomic<uint64_t>& a) {
  return static_cast<double>(a.load(std::memory_order_relaxed));
}

void model_metrics(metrics::exposition& out, const model_figures& m) {
  std::vector<metrics::sample> ended;
  for (size_t i = 0; i < model_outcome_count; ++i)
    ended.push_back({{{"outcome", std::string(to_string(static_cast<model_outcome>(i)))}},
                     load(m.ended[i])});
  out.counter("parley_model_requests_total",
              "Model request attempts ended since start, by outcome (a retry is an attempt).",
              ended);
  out.counter("parley_model_retries_total", "Model requests retried since start, by reason.",
              {{{{"reason", "request"}}, load(m.request_retries)},
               {{{"reason", "stream"}}, load(m.stream_retries)},
               {{{"reason", "held"}}, load(m.held_retries)}});
  out.gauge("parley_model_requests_waiting",
            "Model requests waiting for their provider's concurrency cap now.", now_of(m.waiting));
  out.gauge("parley_model_requests_in_flight", "Model requests past the cap and not ended now.",
            now_of(m.in_flight));
  histogram_of(out, "parley_model_queue_wait_seconds",
               "Time a model request waited for its provider's concurrency cap.", m.queue_wait,
               model_bounds);
  histogram_of(out, "parley_model_first_byte_seconds",
               "Time from a model request's start (past the cap) to its first body bytes, "
               "less any time it was held for a slow client.",
               m.first_byte, model_bounds);
  histogram_of(out, "parley_model_response_seconds",
               "Time from a model request's start (past the cap) to its completed response.",
               m.response, model_bounds);
}

void store_metrics(metrics::exposition& out, const store_write_figures& w) {
  out.counter("parley_store_writes_total", "Durable store writes answered since start, by result.",
              {{{{"result", "stored"}}, load(w.written)}, {{{"result", "failed"}}, load(w.failed)}});
  histogram_of(out, "parley_store_write_seconds",
               "Time from a durable write's arrival at the store writer to its acknowledgement "
               "(synced or committed).",
               w.latency, store_bounds);
}

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
  histogram_of(out, "parley_approval_decision_seconds",
               "Time from an approval's request to its outcome (any outcome).",
               t.approvals.latency(), decision_bounds);
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
  store_metrics(out, t.store_writes);
  model_metrics(out, t.model);
  out.gauge("parley_connections", "Listener connections open now (health checks included).",
            now_of(t.connections.open));
  out.gauge("parley_sessions", "WebSocket sessions open now.", now_of(t.connections.sessions));
  out.gauge("parley_queued_bytes",
            "Bytes written to clients (stdio and WebSocket) and not yet taken by their pipe or socket.",
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
