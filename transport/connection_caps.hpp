#pragma once
// How many connections the listeners hold (issue 25): in all, those that
// have not yet completed their upgrade (the ones a client holds without
// credentials), and those not yet upgraded from one peer address (so one
// address holding its cap of half-open connections does not keep out a
// client from another). The defaults come from the process's open-files
// limit, which is raised to its hard limit at start. Used on the listeners'
// one I/O thread only: no locking.

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace parley::ws {

struct cap_limits {
  size_t connections = 0;          // 0: no limit
  size_t pending = 0;              // not yet upgraded; 0: no limit
  size_t pending_per_address = 0;  // not yet upgraded, per peer address; 0: no limit
};

/// Which cap refused a connection.
enum class cap { none, connections, pending, pending_per_address };
const char* to_string(cap c);

/// Half the open-files limit for connections (the rest is for the store,
/// commands' pipes, model connections); half of that may be not yet
/// upgraded, and half of those from one address.
cap_limits default_cap_limits(uint64_t open_files);

/// Raises the soft open-files limit to the hard one; returns the soft limit
/// in force afterwards.
uint64_t raise_open_files_limit();

class connection_caps {
 public:
  explicit connection_caps(cap_limits limits) : limits_(limits) {}

  /// Counts a new connection from `address` (empty: a Unix socket peer,
  /// which has no per-address cap), or says which cap refuses it.
  cap admit(const std::string& address);
  /// The connection completed its upgrade (a WebSocket session).
  void upgraded(const std::string& address);
  /// The connection is gone; `was_upgraded` as told by upgraded().
  void left(const std::string& address, bool was_upgraded);

  size_t connections() const { return connections_; }
  size_t pending() const { return pending_; }
  const cap_limits& limits() const { return limits_; }

 private:
  void unpend(const std::string& address);

  cap_limits limits_;
  size_t connections_ = 0;
  size_t pending_ = 0;
  std::unordered_map<std::string, size_t> pending_by_address_;
};

}  // namespace parley::ws
