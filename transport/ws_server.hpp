#pragma once
// WebSocket listeners (issue 12), framed as Codex frames them: one JSON-RPC
// message per text frame, binary frames refused, ping/pong and the close
// handshake; `GET /healthz` answers 200 and `GET /readyz` 200, or 503 with
// the reason while the store cannot write, on the same listener; a request
// that carries an Origin header (a browser) is refused with 403. Boost.Beast
// does the HTTP and WebSocket work on one I/O thread of its own, so no
// scheduler worker ever waits on a socket. Each client is its own session (a
// connection actor around an rpc::session), with its own initialize state and
// request ids; a client that stops reading is disconnected once its queue
// passes a bound, and never slows another.
//
// Against hostile and careless clients (issue 25): every phase before a
// session has a deadline (the HTTP request, the TLS handshake, the WebSocket
// handshake, a plain HTTP answer); an established peer that goes silent is
// pinged and closed when no pong comes; connections are capped in all, before
// their upgrade, and before their upgrade per peer address; a Unix socket
// path is never clobbered (unix_socket_claim.hpp).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/connection_caps.hpp"
#include "transport/listen_address.hpp"
#include "transport/ws_auth.hpp"

namespace parley {
class runtime;
}

namespace parley::ws {

struct server_options {
  std::vector<listen_address> addresses;  // tcp and unix_socket ones
  /// The largest message a client may send (a bigger one closes it, 1009).
  size_t max_message_bytes = 16u << 20;
  /// How far a client may fall behind in reading before it is disconnected.
  size_t max_queued_bytes = 64u << 20;
  /// Who may open a session (health checks need nothing).
  auth_config auth;
  /// Who a Unix socket's client is: the local operator's tenant.
  tenant_identity local;
  /// The deadline of each phase before a session: the HTTP request complete
  /// (headers and all), the TLS handshake, the WebSocket handshake, a plain
  /// HTTP answer written.
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
  /// An established connection silent for half of this is pinged; nothing
  /// heard by its end closes it.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};
  /// Connection caps; past one a connection is answered 503 (cleartext
  /// listeners) or closed at once.
  cap_limits caps = default_cap_limits(1024);
  /// wss:// listeners: the certificate (chain) and key, PEM.
  std::string tls_cert_file;
  std::string tls_key_file;
  /// A metrics listener (--metrics-listen): plain HTTP only (/metrics,
  /// /healthz, /readyz); an upgrade is answered like any other path.
  bool plain_http_only = false;
};

/// Connections refused by each cap since start.
struct refusal_counts {
  uint64_t connections = 0;
  uint64_t pending = 0;
  uint64_t pending_per_address = 0;
  /// Connections closed because a phase before their session ran out of time.
  uint64_t deadlines = 0;
};

class server {
 public:
  /// Binds every address (a Unix socket is created 0600) and starts
  /// accepting. Throws std::runtime_error when an address cannot be bound,
  /// or is not loopback while no authentication is configured, or a wss://
  /// address lacks a usable certificate and key.
  server(runtime& rt, server_options options);
  /// Stops accepting, closes every client (their sessions end as for a
  /// client that left) and waits for their connections.
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Closes the listening sockets (a new connection is refused by the
  /// kernel); the connections open go on. Returns once they are closed.
  void stop_accepting();

  /// What is listening, as URLs (a port 0 resolved).
  std::vector<std::string> bound() const;

  /// Whether a wss:// listener is among them.
  bool serves_tls() const;
  /// Reads the certificate and key again for connections that come after
  /// (those open keep theirs). False, logged, when they cannot be used: the
  /// old ones stay.
  bool reload_tls();

  refusal_counts refusals() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace parley::ws
