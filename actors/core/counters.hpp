#pragma once
// Live counts of one runtime's objects (see actors/telemetry.hpp). Each actor
// state holds a `counted` member, so a count drops exactly when the state is
// destroyed: after a turn ends, nothing of it may remain (see tests).

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

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

/// RAII: +1 on a counter while alive. It shares ownership of what holds the
/// counter (an aliasing shared_ptr), so the counter outlives every guard even
/// when an actor state is destroyed after its runtime let go. Empty: counts
/// nothing.
class counted {
 public:
  counted() = default;
  explicit counted(std::shared_ptr<std::atomic<int64_t>> c) : c_(std::move(c)) {
    if (c_) c_->fetch_add(1, std::memory_order_relaxed);
  }
  counted(const counted&) = delete;
  counted& operator=(const counted&) = delete;
  counted(counted&& other) noexcept = default;
  counted& operator=(counted&& other) noexcept {
    if (this != &other) {
      release();
      c_ = std::move(other.c_);
    }
    return *this;
  }
  ~counted() { release(); }

 private:
  void release() {
    if (c_) c_->fetch_sub(1, std::memory_order_relaxed);
    c_.reset();
  }

  std::shared_ptr<std::atomic<int64_t>> c_;
};

}  // namespace parley
