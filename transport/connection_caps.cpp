#include "transport/connection_caps.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace parley::ws {

const char* to_string(cap c) {
  switch (c) {
    case cap::none:
      return "none";
    case cap::connections:
      return "connections";
    case cap::pending:
      return "pending";
    case cap::pending_per_address:
      return "pending_per_address";
  }
  return "?";
}

cap_limits default_cap_limits(uint64_t open_files) {
  cap_limits l;
  l.connections = static_cast<size_t>(std::max<uint64_t>(8, open_files / 2));
  l.pending = std::max<size_t>(4, l.connections / 2);
  l.pending_per_address = std::max<size_t>(2, l.pending / 2);
  return l;
}

uint64_t raise_open_files_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  return lim.rlim_cur == RLIM_INFINITY ? (1u << 20) : static_cast<uint64_t>(lim.rlim_cur);
}

cap connection_caps::admit(const std::string& address) {
  if (limits_.connections > 0 && connections_ >= limits_.connections) return cap::connections;
  if (limits_.pending > 0 && pending_ >= limits_.pending) return cap::pending;
  size_t* from_address = nullptr;
  if (!address.empty()) {
    from_address = &pending_by_address_[address];
    if (limits_.pending_per_address > 0 && *from_address >= limits_.pending_per_address) {
      if (*from_address == 0) pending_by_address_.erase(address);
      return cap::pending_per_address;
    }
    ++*from_address;
  }
  ++connections_;
  ++pending_;
  return cap::none;
}

void connection_caps::unpend(const std::string& address) {
  if (pending_ > 0) --pending_;
  if (address.empty()) return;
  auto it = pending_by_address_.find(address);
  if (it == pending_by_address_.end()) return;
  if (--it->second == 0) pending_by_address_.erase(it);
}

void connection_caps::upgraded(const std::string& address) {
  unpend(address);
}

void connection_caps::left(const std::string& address, bool was_upgraded) {
  if (connections_ > 0) --connections_;
  if (!was_upgraded) unpend(address);
}

}  // namespace parley::ws
