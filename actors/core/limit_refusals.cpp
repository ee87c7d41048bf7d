#include "actors/core/limit_refusals.hpp"

namespace parley {

void limit_refusals::count(std::string_view reason) {
  std::lock_guard<std::mutex> lock{mtx_};
  auto it = counts_.find(reason);
  if (it == counts_.end()) it = counts_.emplace(std::string(reason), 0).first;
  ++it->second;
}

std::map<std::string, uint64_t> limit_refusals::snapshot() const {
  std::lock_guard<std::mutex> lock{mtx_};
  return std::map<std::string, uint64_t>(counts_.begin(), counts_.end());
}

}  // namespace parley
