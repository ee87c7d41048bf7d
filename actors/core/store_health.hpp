#pragma once
// Whether the store can write now, as every part that must not promise what
// it cannot keep reads it: thread/start and turn/start are refused while it
// cannot, /readyz answers not ready. The store's writers report into it (one
// source each); everybody else only reads. Transitions are logged, once each.

#include <caf/error.hpp>
#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

namespace parley {

class store_health {
 public:
  /// Cheap enough to ask on every request.
  bool writable() const { return faults_.load(std::memory_order_acquire) == 0; }

  /// Why not ("" when it can): the first faulty source's reason.
  std::string fault() const;

  /// The error for a request that would start something new now: -32001
  /// (retryable), naming the cause; none while the store writes.
  caf::error refusal() const;

  /// `source` cannot write, because of `reason`.
  void set_fault(int source, const std::string& reason);

  /// `source` writes again.
  void clear_fault(int source);

 private:
  mutable std::mutex mutex_;
  std::unordered_map<int, std::string> reasons_;
  std::atomic<int> faults_{0};
};

}  // namespace parley
