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
    else if (stage != "limit")  // a pending-approvals limit's decline: no stage decided it
      by_client_.fetch_add(1, relaxed);
  } else if (how == "timed_out") {
    timed_out_.fetch_add(1, relaxed);
  } else if (how == "client_error" || how == "malformed") {
    failed_.fetch_add(1, relaxed);
  } else {
    cancelled_.fetch_add(1, relaxed);
  }
  latency_.record(latency);
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
  s.p50_ms = latency_.quantile_ms(0.50);
  s.p99_ms = latency_.quantile_ms(0.99);
  return s;
}

}  // namespace parley
