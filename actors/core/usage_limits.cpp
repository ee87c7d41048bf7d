#include "actors/core/usage_limits.hpp"

#include <utility>

#include "actors/core/errors.hpp"

namespace parley {

const char* describe(usage_kind k) {
  switch (k) {
    case usage_kind::loaded_threads:
      return "loaded threads";
    case usage_kind::running_turns:
      return "running turns";
    case usage_kind::pending_approvals:
      return "pending approvals";
  }
  return "loaded threads";
}

namespace {

const char* short_name(usage_kind k) {
  switch (k) {
    case usage_kind::loaded_threads:
      return "threads";
    case usage_kind::running_turns:
      return "turns";
    case usage_kind::pending_approvals:
      return "approvals";
  }
  return "threads";
}

}  // namespace

std::string refusal_reason(bool tenant, usage_kind kind) {
  return std::string{tenant ? "tenant_" : "connection_"} + short_name(kind);
}

int64_t usage_limits::of_tenant(usage_kind k) const {
  switch (k) {
    case usage_kind::loaded_threads:
      return tenant_loaded_threads;
    case usage_kind::running_turns:
      return tenant_running_turns;
    case usage_kind::pending_approvals:
      return tenant_pending_approvals;
  }
  return 0;
}

int64_t usage_limits::of_connection(usage_kind k) const {
  switch (k) {
    case usage_kind::loaded_threads:
      return connection_loaded_threads;
    case usage_kind::running_turns:
      return connection_running_turns;
    case usage_kind::pending_approvals:
      return connection_pending_approvals;
  }
  return 0;
}

namespace {

const std::pair<const char*, int64_t usage_limits::*> limit_keys[] = {
    {"tenant_loaded_threads", &usage_limits::tenant_loaded_threads},
    {"tenant_running_turns", &usage_limits::tenant_running_turns},
    {"tenant_pending_approvals", &usage_limits::tenant_pending_approvals},
    {"connection_loaded_threads", &usage_limits::connection_loaded_threads},
    {"connection_running_turns", &usage_limits::connection_running_turns},
    {"connection_pending_approvals", &usage_limits::connection_pending_approvals},
};

}  // namespace

bool usage_limits::set(const std::string& key, int64_t value) {
  for (const auto& [name, member] : limit_keys) {
    if (key != name) continue;
    this->*member = value;
    return true;
  }
  return false;
}

std::string usage_limits::keys() {
  std::string out;
  for (const auto& [name, member] : limit_keys) out += (out.empty() ? "" : ", ") + std::string{name};
  return out;
}

int64_t& usage_counts::operator[](usage_kind k) {
  switch (k) {
    case usage_kind::running_turns:
      return running_turns;
    case usage_kind::pending_approvals:
      return pending_approvals;
    case usage_kind::loaded_threads:
      break;
  }
  return loaded_threads;
}

int64_t usage_counts::operator[](usage_kind k) const {
  return const_cast<usage_counts&>(*this)[k];
}

// -- usage_grant ---------------------------------------------------------------

usage_grant::usage_grant(std::shared_ptr<usage_table> table, usage_kind kind, std::string tenant,
                         uint64_t connection)
    : table_(std::move(table)), kind_(kind), tenant_(std::move(tenant)), connection_(connection) {}

usage_grant::usage_grant(usage_grant&& other) noexcept
    : table_(std::move(other.table_)),
      kind_(other.kind_),
      tenant_(std::move(other.tenant_)),
      connection_(other.connection_) {
  other.table_.reset();
}

usage_grant& usage_grant::operator=(usage_grant&& other) noexcept {
  if (this != &other) {
    release();
    table_ = std::move(other.table_);
    other.table_.reset();
    kind_ = other.kind_;
    tenant_ = std::move(other.tenant_);
    connection_ = other.connection_;
  }
  return *this;
}

void usage_grant::release() {
  if (!table_) return;
  table_->give_back(kind_, tenant_, connection_);
  table_.reset();
}

// -- usage_table ---------------------------------------------------------------

namespace {

/// The -32001 error for `who` ("tenant acme", "this connection") at its limit.
caf::error overloaded(const std::string& who, int64_t held, usage_kind kind, int64_t limit) {
  return make_error(errc::overloaded, "Server overloaded: " + who + " has " + std::to_string(held)
                                          + " " + describe(kind) + " (limit "
                                          + std::to_string(limit) + "); retry later.");
}

}  // namespace

caf::expected<usage_grant> usage_table::acquire(usage_kind kind, const std::string& tenant,
                                                uint64_t connection, const usage_limits& limits,
                                                std::string* reason) {
  std::unique_lock<std::mutex> lock{mtx_};
  auto limit = limits.of_tenant(kind);
  auto t = tenants_.find(tenant);
  auto held = t == tenants_.end() ? int64_t{0} : t->second[kind];
  if (limit > 0 && held >= limit) {
    lock.unlock();
    if (reason) *reason = refusal_reason(true, kind);
    return overloaded("tenant " + tenant, held, kind, limit);
  }
  if (connection != 0) {
    limit = limits.of_connection(kind);
    auto c = connections_.find(connection);
    held = c == connections_.end() ? int64_t{0} : c->second[kind];
    if (limit > 0 && held >= limit) {
      lock.unlock();
      if (reason) *reason = refusal_reason(false, kind);
      return overloaded("this connection", held, kind, limit);
    }
  }
  return count_locked(kind, tenant, connection);  // still under the lock: never past the cap
}

usage_grant usage_table::force(usage_kind kind, const std::string& tenant, uint64_t connection) {
  std::lock_guard<std::mutex> lock{mtx_};
  return count_locked(kind, tenant, connection);
}

usage_grant usage_table::count_locked(usage_kind kind, const std::string& tenant,
                                      uint64_t connection) {
  ++tenants_[tenant][kind];
  if (connection != 0) ++connections_[connection][kind];
  return usage_grant{shared_from_this(), kind, tenant, connection};
}

void usage_table::give_back(usage_kind kind, const std::string& tenant, uint64_t connection) {
  std::lock_guard<std::mutex> lock{mtx_};
  if (auto t = tenants_.find(tenant); t != tenants_.end()) {
    --t->second[kind];
    if (t->second.empty()) tenants_.erase(t);
  }
  if (connection == 0) return;
  if (auto c = connections_.find(connection); c != connections_.end()) {
    --c->second[kind];
    if (c->second.empty()) connections_.erase(c);
  }
}

usage_counts usage_table::of_tenant(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock{mtx_};
  auto t = tenants_.find(tenant);
  return t == tenants_.end() ? usage_counts{} : t->second;
}

usage_counts usage_table::of_connection(uint64_t connection) const {
  std::lock_guard<std::mutex> lock{mtx_};
  auto c = connections_.find(connection);
  return c == connections_.end() ? usage_counts{} : c->second;
}

std::map<std::string, usage_counts> usage_table::tenants() const {
  std::lock_guard<std::mutex> lock{mtx_};
  return tenants_;
}

}  // namespace parley
