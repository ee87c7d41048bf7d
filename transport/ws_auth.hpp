#pragma once
// Who may open a WebSocket session (issue 12), as Codex's app-server decides
// it: no check (loopback and Unix sockets only), a capability token, or a
// signed bearer token (a JWT signed with HMAC-SHA256 over a shared secret,
// with an expiry). The client sends it at the handshake as
// `Authorization: Bearer ...`; tokens are compared in constant time, and a
// refused handshake never reaches the protocol.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::ws {

struct auth_config {
  enum class mode { none, capability_token, signed_bearer_token };
  mode what = mode::none;
  std::string secret;  // the token, or the shared secret
};

/// The --ws-auth settings: mode "" / "none", "capability-token" (with
/// `token_file`) or "signed-bearer-token" (with `secret_file`). The file's
/// content, without its trailing newline, is the token or the secret.
/// nullopt and `error` set when they do not make a usable check.
std::optional<auth_config> load_auth(const std::string& mode, const std::string& token_file,
                                     const std::string& secret_file, std::string& error);

/// Why a handshake with this `Authorization` header value (empty if absent)
/// is refused at `now` (unix seconds); nullopt: it may connect.
std::optional<std::string> refusal(const auth_config& cfg, std::string_view authorization,
                                   int64_t now);

/// Equal strings, in a time that does not depend on where they differ.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace parley::ws
