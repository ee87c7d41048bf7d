#pragma once
// Caps the requests running at once per gate (a model provider), and lets
// the ones past the cap wait their turn fairly: round-robin over tenants,
// and within a tenant round-robin over its threads, so a thread with many
// requests waiting (or a tenant with many threads) cannot starve the others.
// Within one thread, requests start in the order they came.
//
// Why: a local model server serves a few requests at a time, and its accept
// backlog is small; fifty requests opened at once wait out TCP's SYN
// retransmissions (seconds each) instead of the server's own pace.
//
// Pure bookkeeping of request ids: no curl, no threads, not thread-safe (the
// client's I/O thread alone uses it).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace parley::http {

/// Who waits: the tenant (empty until tenants come: one tenant) and the
/// thread (any key the caller's fairness is over).
struct wait_key {
  std::string tenant;
  std::string thread;
};

class fair_gate {
 public:
  using id_type = uint64_t;

  /// Request `id` wants a slot of `gate`, which runs at most `limit` at once
  /// (the latest limit given for a gate holds; 0: no cap). True: it may start
  /// now (it holds a slot until leave()); false: it waits.
  bool arrive(const std::string& gate, std::size_t limit, const wait_key& key, id_type id);

  /// `id` is done (its slot is free) or no longer waits (aborted). Returns
  /// the ids that may start now, in order; each holds a slot. Unknown ids
  /// are ignored.
  std::vector<id_type> leave(id_type id);

  std::size_t running(const std::string& gate) const;
  std::size_t waiting(const std::string& gate) const;

 private:
  struct tenant_queue {
    std::deque<std::string> thread_order;  // threads with requests waiting
    std::map<std::string, std::deque<id_type>> by_thread;
  };
  struct gate_state {
    std::size_t limit = 0;
    std::size_t running = 0;
    std::size_t waiting = 0;
    std::deque<std::string> tenant_order;  // tenants with requests waiting
    std::map<std::string, tenant_queue> by_tenant;
  };
  struct place {
    std::string gate;
    wait_key key;
    bool running = false;
  };

  bool has_room(const gate_state& g) const { return g.limit == 0 || g.running < g.limit; }
  id_type pop_next(gate_state& g);
  void forget_waiting(gate_state& g, const wait_key& key, id_type id);

  std::map<std::string, gate_state> gates_;
  std::unordered_map<id_type, place> places_;
};

}  // namespace parley::http
