#pragma once
// What each tenant and each connection holds of the runtime (issue 22):
// loaded threads, running turns, pending approvals, against the limits of
// config.toml's [parley.limits]. Whoever starts one of these things asks
// the table first; past a limit it gets Codex's -32001 naming the limit,
// never a crash or memory without bound. The grant it gets otherwise is
// held by the actor that owns the thing and released when it ends (a guard
// like `counted`), so usage cannot outlive what it counts.
//
// Thread-safe: actors on every scheduler thread take and release grants.
// One mutex-guarded map keyed by tenant (and one by connection): a grant is
// taken once per thread load, turn or approval, far rarer than the work.

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace parley {

/// What is counted.
enum class usage_kind : uint8_t { loaded_threads, running_turns, pending_approvals };

/// "loaded threads", "running turns", "pending approvals".
const char* describe(usage_kind k);

/// The limits, 0 = none. The defaults keep a 24 GiB machine alive (see
/// README.md, "Limits": a running turn's command output dominates).
struct usage_limits {
  int64_t tenant_loaded_threads = 100000;
  int64_t tenant_running_turns = 10000;
  int64_t tenant_pending_approvals = 10000;
  // A connection may take its tenant's whole share by default: stdio is one
  // connection serving a whole host, and a benchmark harness drives
  // thousands of turns over one.
  int64_t connection_loaded_threads = 100000;
  int64_t connection_running_turns = 10000;
  int64_t connection_pending_approvals = 10000;

  int64_t of_tenant(usage_kind k) const;
  int64_t of_connection(usage_kind k) const;

  /// Sets the limit config.toml names `key` (tenant_loaded_threads, ...);
  /// false for a key that names none.
  bool set(const std::string& key, int64_t value);
  /// The keys, comma-separated (for an error about an unknown one).
  static std::string keys();
};

/// One holder's usage.
struct usage_counts {
  int64_t loaded_threads = 0;
  int64_t running_turns = 0;
  int64_t pending_approvals = 0;

  int64_t& operator[](usage_kind k);
  int64_t operator[](usage_kind k) const;
  bool empty() const { return loaded_threads == 0 && running_turns == 0 && pending_approvals == 0; }
};

class usage_table;

/// RAII: one unit of a tenant's (and a connection's) usage while alive. It
/// shares ownership of the table, so a grant outliving its runtime releases
/// safely. Empty: counts nothing.
class usage_grant {
 public:
  usage_grant() = default;
  usage_grant(const usage_grant&) = delete;
  usage_grant& operator=(const usage_grant&) = delete;
  usage_grant(usage_grant&& other) noexcept;
  usage_grant& operator=(usage_grant&& other) noexcept;
  ~usage_grant() { release(); }

  /// Gives the unit back now (idempotent).
  void release();
  explicit operator bool() const { return table_ != nullptr; }

 private:
  friend class usage_table;
  usage_grant(std::shared_ptr<usage_table> table, usage_kind kind, std::string tenant,
              uint64_t connection);

  std::shared_ptr<usage_table> table_;
  usage_kind kind_ = usage_kind::loaded_threads;
  std::string tenant_;
  uint64_t connection_ = 0;
};

class usage_table : public std::enable_shared_from_this<usage_table> {
 public:
  /// One more `kind` for `tenant` and `connection` (0: no connection, as
  /// for a turn the server restores), or the -32001 error naming the limit
  /// reached (tenant first). `refusal_reason` receives the constant reason
  /// for limit_refusals ("tenant_turns", ...) when refused.
  caf::expected<usage_grant> acquire(usage_kind kind, const std::string& tenant,
                                     uint64_t connection, const usage_limits& limits,
                                     std::string* refusal_reason = nullptr);
  /// One more without a check: work the server resumes by itself (a turn
  /// restored after a restart) is counted but never refused.
  usage_grant force(usage_kind kind, const std::string& tenant, uint64_t connection);

  usage_counts of_tenant(const std::string& tenant) const;
  usage_counts of_connection(uint64_t connection) const;
  /// Every tenant holding something now.
  std::map<std::string, usage_counts> tenants() const;

 private:
  friend class usage_grant;
  void give_back(usage_kind kind, const std::string& tenant, uint64_t connection);
  /// One more, counted; the caller holds mtx_.
  usage_grant count_locked(usage_kind kind, const std::string& tenant, uint64_t connection);

  mutable std::mutex mtx_;
  // Entries are erased when they drop to nothing: the maps hold only the
  // tenants and connections that hold something now.
  std::map<std::string, usage_counts> tenants_;
  std::unordered_map<uint64_t, usage_counts> connections_;
};

/// The constant reason a refusal is counted under: "tenant_threads",
/// "connection_turns", "tenant_approvals", ...
std::string refusal_reason(bool tenant, usage_kind kind);

}  // namespace parley
