#include "actors/core/counters.hpp"

namespace parley {

live_counters& counters() {
  static live_counters instance;
  return instance;
}

runtime_counts snapshot_counts() {
  auto& c = counters();
  runtime_counts r;
  r.conversations = c.conversations.load();
  r.turns = c.turns.load();
  r.approvals = c.approvals.load();
  r.execs = c.execs.load();
  r.pending_asks = c.pending_asks.load();
  r.pending_requests = c.pending_requests.load();
  r.processes = c.processes.load();
  return r;
}

const char* to_string(approval_outcome::kind x) {
  switch (x) {
    case approval_outcome::kind::decided:
      return "decided";
    case approval_outcome::kind::client_error:
      return "client_error";
    case approval_outcome::kind::malformed:
      return "malformed";
    case approval_outcome::kind::timed_out:
      return "timed_out";
    case approval_outcome::kind::transport_closed:
      return "transport_closed";
    case approval_outcome::kind::cancelled:
      return "cancelled";
  }
  return "cancelled";
}

}  // namespace parley
