#pragma once
// Who a client is (issue 22): its tenant, from its credentials, and the
// subject that speaks for it. Every thread belongs to the tenant that created
// it; a session sees only its tenant's threads unless it holds the operator
// scope, which sees every tenant's (and the audit log says so).

#include <string>

namespace parley {

struct tenant_identity {
  /// Threads stored before tenants existed, and clients whose credentials
  /// name no tenant, belong to this one.
  static constexpr const char* default_tenant = "default";
  /// The scope (a token's `scope` claim) that sees every tenant's threads.
  static constexpr const char* operator_scope = "parley:operator";

  std::string tenant = default_tenant;
  /// Who decided, for the audit log (a token's `sub`; "local" for stdio and
  /// the Unix socket).
  std::string subject = "local";
  /// Sees and acts on every tenant's threads.
  bool is_operator = false;
  /// The local operator (stdio, the Unix socket): may name rollouts by path.
  bool local = false;

  /// May this client see a thread of `owner`'s?
  bool sees(const std::string& owner) const { return is_operator || owner == tenant; }
};

/// A stored thread's tenant: the default one when it predates tenants.
inline std::string tenant_or_default(const std::string& stored) {
  return stored.empty() ? std::string{tenant_identity::default_tenant} : stored;
}

}  // namespace parley
