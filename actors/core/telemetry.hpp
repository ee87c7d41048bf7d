#pragma once
// What one runtime counts about itself: its live objects (parley/debug/counts),
// its approvals (parley/stats), and the sequences that name its approval asks
// and its server->client requests. The runtime makes one and hands it to every
// actor through runtime_services and to each connection at spawn, so two
// runtimes in one process (a host embedding parley twice, tests) never see
// each other's figures.

#include <atomic>
#include <cstdint>
#include <memory>

#include "actors/core/approval_stats.hpp"
#include "actors/core/backend_figures.hpp"
#include "actors/core/counters.hpp"
#include "actors/core/limit_refusals.hpp"
#include "actors/core/messages.hpp"
#include "actors/core/store_health.hpp"
#include "actors/core/usage_limits.hpp"

namespace parley {

/// The thread index catching up at start (issue 28), which lists do not wait
/// for: while it runs a list may miss a rollout another process wrote, or
/// show one removed behind parley's back. The index actor writes; stats read.
struct index_sync_progress {
  enum phase_code : int { ready = 0, rebuilding = 1, reconciling = 2, opening = 3 };
  std::atomic<int> phase{ready};
  std::atomic<int64_t> seen{0};     // rollouts stat'ed (or read, rebuilding)
  std::atomic<int64_t> read{0};     // rollouts read again
  std::atomic<int64_t> removed{0};  // rows whose rollout is gone
};

/// The listeners' connections (their I/O thread writes; /metrics reads).
struct connection_figures {
  std::atomic<int64_t> open{0};          // accepted and not yet closed
  std::atomic<int64_t> sessions{0};      // of those, upgraded to a session
  std::atomic<int64_t> queued_bytes{0};  // written by parley, not yet by the socket
};

class runtime_telemetry {
 public:
  live_counters live;
  approval_stats approvals;
  /// Whether the store can write now (its writers report; requests read).
  store_health store;
  /// The store's writes and the model provider's requests (their writers
  /// and the HTTP models record; stats and /metrics read).
  store_write_figures store_writes;
  model_figures model;
  index_sync_progress index_sync;
  /// Refusals because a limit was reached, by reason (GET /metrics).
  limit_refusals limits;
  connection_figures connections;
  /// What each tenant and connection holds (threads, turns, approvals)
  /// against config.toml's [parley.limits]; shared so grants outlive none.
  std::shared_ptr<usage_table> usage = std::make_shared<usage_table>();
  /// Set once a stop signal starts the drain: /readyz answers 503 and no
  /// new turn starts; running ones go on.
  std::atomic<bool> draining{false};

  runtime_counts counts() const;

  /// A key for an approval ask, unique in this runtime (the clients an ask
  /// can reach all belong to it).
  uint64_t next_ask_key() { return ask_keys_.fetch_add(1, std::memory_order_relaxed); }

  /// A server->client request id, unique in this runtime: a reply meant for
  /// another connection's request never matches one of this connection's.
  /// (Codex numbers 0, 1, 2, ... per connection; with one connection, as over
  /// stdio, the numbers are the same.)
  int64_t next_request_id() { return request_ids_.fetch_add(1, std::memory_order_relaxed); }
  /// Cluster: this node's ids start at its ordinal << 40, so a client's
  /// answer says which node asked (before any request is made).
  void start_request_ids_at(int64_t first) { request_ids_.store(first); }

 private:
  std::atomic<uint64_t> ask_keys_{1};
  std::atomic<int64_t> request_ids_{0};
};

/// +1 on `t`'s counter `which` while the guard lives; the guard keeps `t`
/// alive. A null `t` counts nothing (parts used alone, as in their tests).
counted count_live(const std::shared_ptr<runtime_telemetry>& t,
                   std::atomic<int64_t> live_counters::*which);

/// One more `kind` for `tenant` (and `connection`, 0: none) against
/// `limits`, or the -32001 error naming the limit reached, counted in
/// `t->limits` by its reason and logged. A null `t` grants an empty guard.
caf::expected<usage_grant> acquire_usage(const std::shared_ptr<runtime_telemetry>& t,
                                         usage_kind kind, const std::string& tenant,
                                         uint64_t connection, const usage_limits& limits);

}  // namespace parley
