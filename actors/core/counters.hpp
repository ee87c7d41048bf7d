#pragma once
// Process-wide live counts of runtime objects. Each actor state holds a
// `counted` member, so a count drops exactly when the state is destroyed:
// after a turn ends, nothing of it may remain (see tests).

#include <atomic>
#include <cstdint>

#include "actors/core/messages.hpp"

namespace parley {

struct live_counters {
  std::atomic<int64_t> conversations{0};
  std::atomic<int64_t> turns{0};
  std::atomic<int64_t> approvals{0};
  std::atomic<int64_t> execs{0};
  std::atomic<int64_t> pending_asks{0};
  std::atomic<int64_t> pending_requests{0};
  std::atomic<int64_t> processes{0};
};

live_counters& counters();

runtime_counts snapshot_counts();

/// RAII: +1 while alive.
class counted {
 public:
  explicit counted(std::atomic<int64_t>& c) : c_(&c) { c_->fetch_add(1, std::memory_order_relaxed); }
  counted(const counted&) = delete;
  counted& operator=(const counted&) = delete;
  ~counted() { c_->fetch_sub(1, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t>* c_;
};

}  // namespace parley
