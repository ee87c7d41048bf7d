#pragma once
// `parley app-server`: the runtime served over stdio JSON-RPC.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "actors/core/config.hpp"

namespace parley {

/// Where the app-server serves, and who may connect (its command line).
struct listen_options {
  std::vector<std::string> listen;  // --listen values; none: stdio
  std::string ws_auth;              // "", "capability-token", "signed-bearer-token"
  std::string ws_token_file;
  std::string ws_shared_secret_file;
  /// Signed bearer tokens: the claim naming the tenant, and the `iss`,
  /// `aud` and clock leeway checked when set (issue 22).
  std::string ws_tenant_claim = "tenant";
  std::string ws_issuer;
  std::string ws_audience;
  uint32_t ws_leeway_seconds = 0;
  /// The tenant of stdio and Unix socket clients (the local operator).
  std::string local_tenant = "default";
  /// Bytes a WebSocket client may fall behind before it is disconnected
  /// (requests get -32001 past half of it); 0: the default.
  size_t ws_max_queue = 0;
  /// Bytes the stdio client may fall behind (issue 22): past an eighth the
  /// model streams of its threads pause, past it the server gives up on the
  /// client as if its input had ended; 0: the default.
  size_t stdio_max_queue = 0;
  /// The deadline of each phase before a session (the HTTP request, the TLS
  /// and WebSocket handshakes, a plain answer); at most 30 s.
  std::chrono::milliseconds ws_handshake_timeout{std::chrono::seconds(10)};
  /// An established peer silent this long (no answer to the ping sent at its
  /// half) is closed.
  std::chrono::milliseconds ws_idle_timeout{std::chrono::seconds(60)};
  /// Connection caps; 0: derived from the open-files limit.
  size_t ws_max_connections = 0;
  size_t ws_max_pending = 0;
  size_t ws_max_pending_per_address = 0;
  /// wss:// listeners: the certificate (PEM, a chain allowed) and its key,
  /// read again on SIGHUP.
  std::string tls_cert;
  std::string tls_key;
  /// --metrics-listen HOST:PORT: plain HTTP for /metrics, /healthz, /readyz.
  std::string metrics_listen;
  /// How long a stop signal's drain may take (listeners; 0: none).
  std::chrono::milliseconds drain_timeout{std::chrono::seconds(30)};
};

/// Serves the runtime where `listen` says (--listen values; none: stdio).
/// With stdio, until its input ends (or SIGINT/SIGTERM); with listeners
/// only, until a stop signal, which drains first (see drain_timeout). Then
/// it shuts down in order: pending approvals
/// resolve as cancelled, running commands are killed, active turns end
/// interrupted. Returns the exit code (2 for a bad --listen value).
int run_app_server(runtime_config config, const listen_options& listen = {});

}  // namespace parley
