#include "bench/mock_model/faults.hpp"

#include <algorithm>
#include <functional>

namespace parley::mock_model {

const fault* fault_counter::hit(const script& s, std::size_t response_number,
                                const std::string& input_key) {
  const auto input_hash = std::to_string(std::hash<std::string>{}(input_key));
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    const auto& f = s.faults[i];
    if (f.at != response_number) continue;
    auto key = input_hash + "#" + std::to_string(i) + "#" + f.line;
    auto [it, inserted] = hits_.try_emplace(key, 0u);
    if (inserted) {
      order_.push_back(key);
      if (order_.size() > capacity_) {  // never the key just added: capacity_ >= 1
        hits_.erase(order_.front());
        order_.pop_front();
      }
    }
    if (it->second >= f.times) continue;
    ++it->second;
    return &f;
  }
  return nullptr;
}

stream_plan plan_stream(std::vector<sse_event> events, const fault* hit, long pace_ms) {
  stream_plan plan;
  plan.pace_ms = pace_ms;
  plan.events = std::move(events);
  if (hit == nullptr || plan.events.empty()) return plan;
  switch (hit->kind) {
    case fault_kind::malformed:
      plan.events.insert(plan.events.begin() + 1,
                         {"data: {\"type\": this line is not JSON\n\n", false});
      break;
    case fault_kind::cut:
      // Half of the events whole, then half of the next one; never the last event.
      plan.cut_at = std::min(std::max<std::size_t>(1, plan.events.size() / 2),
                             plan.events.size() - 1);
      break;
    case fault_kind::stall: {
      auto first_delta = std::find_if(plan.events.begin(), plan.events.end(),
                                      [](const sse_event& e) { return e.is_delta; });
      plan.stall_after = first_delta == plan.events.end()
                             ? 0
                             : static_cast<std::size_t>(first_delta - plan.events.begin());
      plan.stall_ms = hit->stall_ms;
      plan.close_after_stall = hit->close_after;
      break;
    }
    case fault_kind::http:
    case fault_kind::failed:
      break;
  }
  return plan;
}

}  // namespace parley::mock_model
