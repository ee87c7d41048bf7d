#include "actors/core/store_health.hpp"

#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"
#include "actors/core/services.hpp"

namespace parley {

std::string store_health::fault() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return reasons_.empty() ? std::string{} : reasons_.begin()->second;
}

void store_health::set_fault(int source, const std::string& reason) {
  std::lock_guard<std::mutex> lock{mutex_};
  bool was_writable = reasons_.empty();
  bool fresh = reasons_.find(source) == reasons_.end();
  reasons_[source] = reason;
  faults_.store(static_cast<int>(reasons_.size()), std::memory_order_release);
  if (was_writable)
    PARLEY_ERROR("store event=cannot_write reason=\"{}\" (new threads and turns are refused; "
                 "records wait for the disk)",
                 reason);
  else if (fresh)
    PARLEY_WARN("store event=cannot_write source={} reason=\"{}\"", source, reason);
}

void store_health::clear_fault(int source) {
  std::lock_guard<std::mutex> lock{mutex_};
  if (reasons_.erase(source) == 0) return;
  faults_.store(static_cast<int>(reasons_.size()), std::memory_order_release);
  if (reasons_.empty()) PARLEY_INFO("store event=writable_again (records that waited are written)");
}

caf::error store_health::refusal() const {
  if (writable()) return caf::error{};
  return make_error(errc::overloaded,
                    "the store cannot write (" + fault() + "); retry once it can");
}

caf::error store_refusal(const runtime_services& svc) {
  return svc.telemetry ? svc.telemetry->store.refusal() : caf::error{};
}

caf::error drain_refusal(const runtime_services& svc) {
  if (!svc.telemetry || !svc.telemetry->draining.load(std::memory_order_acquire)) return {};
  return make_error(errc::overloaded,
                    "the server is shutting down: it starts no new turn (running ones "
                    "finish); retry on another server or once it is back");
}

}  // namespace parley
