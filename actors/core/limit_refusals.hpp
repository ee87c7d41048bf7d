#pragma once
// Requests and connections refused because a limit was reached, by reason
// (a connection cap, a full client queue, a tenant's quota, ...), for
// `GET /metrics` (parley_limit_refusals_total{reason}). Whoever enforces a
// limit bumps it with a reason that is a constant in the code, so the label
// stays of bounded cardinality: never a thread id, a peer or a tenant name.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace parley {

class limit_refusals {
 public:
  /// One refusal because of `reason` (a snake_case constant).
  void count(std::string_view reason);
  /// Every reason seen since start and its count.
  std::map<std::string, uint64_t> snapshot() const;

 private:
  // Refusals are rare next to the work they refuse: a mutex is cheap enough
  // and keeps the reasons open to other parts without a central list.
  mutable std::mutex mtx_;
  std::map<std::string, uint64_t, std::less<>> counts_;
};

}  // namespace parley
