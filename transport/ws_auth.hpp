#pragma once
// Who may open a WebSocket session (issue 12), as Codex's app-server decides
// it, and who the client is (issue 22: its tenant): no check (loopback and
// Unix sockets only), a capability token (a file that maps each token to a
// tenant), or a signed bearer token (a JWT signed with HMAC-SHA256 over a
// shared secret, with an expiry, verified by cpp-jwt). The client sends it at
// the handshake as `Authorization: Bearer ...`; capability tokens are
// compared in constant time, and a refused handshake never reaches the
// protocol.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/core/tenant.hpp"

namespace parley::ws {

struct auth_config {
  enum class mode { none, capability_token, signed_bearer_token };
  mode what = mode::none;
  std::string secret;  // the shared secret (signed bearer tokens)
  /// capability-token: each token and who it is (an old one-token file: that
  /// token is the default tenant's).
  struct token_entry {
    std::string token;
    tenant_identity who;
  };
  std::vector<token_entry> tokens;
  /// signed-bearer-token: the claim that names the tenant (absent: the
  /// default tenant), and what is checked when set: `iss`, `aud`, and the
  /// seconds of clock difference `exp` and `nbf` tolerate.
  std::string tenant_claim = "tenant";
  std::string issuer;
  std::string audience;
  uint32_t leeway_seconds = 0;
  /// The tenant of a client whose credentials name none.
  std::string default_tenant{tenant_identity::default_tenant};
};

/// The --ws-auth settings beyond the mode and its file.
struct auth_claims {
  std::string tenant_claim = "tenant";
  std::string issuer;
  std::string audience;
  uint32_t leeway_seconds = 0;
};

/// The --ws-auth settings: mode "" / "none", "capability-token" (with
/// `token_file`) or "signed-bearer-token" (with `secret_file`). A secret
/// file's content, without its trailing newline, is the secret; a token file
/// holds one token (the default tenant's), or lines `TOKEN TENANT [SUBJECT]
/// [operator]` (blank lines and `#` comments allowed). nullopt and `error`
/// set when they do not make a usable check.
std::optional<auth_config> load_auth(const std::string& mode, const std::string& token_file,
                                     const std::string& secret_file, std::string& error,
                                     const auth_claims& claims = {});

/// Who a handshake with this `Authorization` header value (empty if absent)
/// is at `now` (unix seconds): `who` is set and nullopt returned, or why it
/// is refused. Without a mode everyone is the default tenant.
std::optional<std::string> authenticate(const auth_config& cfg, std::string_view authorization,
                                        int64_t now, tenant_identity& who);

/// Why a handshake is refused (authenticate without the identity).
std::optional<std::string> refusal(const auth_config& cfg, std::string_view authorization,
                                   int64_t now);

/// Equal strings, in a time that does not depend on where they differ.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace parley::ws
