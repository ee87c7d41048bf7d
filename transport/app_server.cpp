#include "transport/app_server.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <caf/scoped_actor.hpp>
#include <csignal>
#include <cstdio>
#include <memory>

#include "actors/core/log.hpp"
#include "actors/runtime/runtime.hpp"
#include "transport/connection.hpp"
#include "transport/line_reader.hpp"
#include "transport/line_writer.hpp"
#include "transport/remote_session.hpp"
#include "transport/ws_server.hpp"

namespace parley {

namespace {

/// SIGINT/SIGTERM/SIGHUP end the service in order. They are blocked in every
/// thread and read from a signalfd (by the line reader, or by main).
int block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return ::signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);
}

/// One client on stdin/stdout until its input ends or a stop signal comes;
/// then every thread is shut down (pending approvals resolve as cancelled;
/// after a signal, with the store sealed, they stay pending on disk).
void serve_stdio(runtime& rt, int signal_fd) {
  auto writer = rt.system().spawn<caf::detached>(line_writer, STDOUT_FILENO);
  connection_options options;
  options.config = rt.shared_config();
  options.telemetry = rt.telemetry();
  options.cluster_router = rt.thread_router();
  options.shutdown_on_close = true;
  auto conn = rt.system().spawn<caf::detached>(connection, rt.threads(), writer, options);
  // A signal is the server going away, not the client: what is pending
  // stays pending on disk. The input ending is the client leaving: its
  // approvals are cancelled, as in Codex.
  line_reader reader{STDIN_FILENO, caf::actor_cast<caf::actor>(conn), signal_fd,
                     [&rt] { rt.seal_store(); }};
  caf::scoped_actor self{rt.system()};
  self->wait_for(conn);
}

/// Waits for SIGINT/SIGTERM, or SIGHUP where no wss:// listener reads its
/// certificate again on it.
void wait_for_stop_signal(int signal_fd, ws::server* listeners) {
  for (;;) {
    pollfd p{signal_fd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    signalfd_siginfo info{};
    if (::read(signal_fd, &info, sizeof(info)) != static_cast<ssize_t>(sizeof(info))) continue;
    if (info.ssi_signo == SIGHUP && listeners && listeners->serves_tls()) {
      listeners->reload_tls();
      continue;
    }
    break;
  }
  PARLEY_INFO("app-server event=stop_signal");
}

}  // namespace

int run_app_server(runtime_config config, const listen_options& listen) {
  // A vanished reader must show up as EPIPE in the writer, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  int signal_fd = block_stop_signals();
  bool stdio = listen.listen.empty();
  ws::server_options ws_options;
  std::string auth_error;
  auto auth = ws::load_auth(listen.ws_auth, listen.ws_token_file, listen.ws_shared_secret_file,
                            auth_error);
  if (!auth) {
    std::fprintf(stderr, "parley: %s\n", auth_error.c_str());
    return 2;
  }
  ws_options.auth = std::move(*auth);
  if (listen.ws_max_queue > 0) ws_options.max_queued_bytes = listen.ws_max_queue;
  ws_options.handshake_timeout = listen.ws_handshake_timeout;
  ws_options.idle_timeout = listen.ws_idle_timeout;
  ws_options.tls_cert_file = listen.tls_cert;
  ws_options.tls_key_file = listen.tls_key;
  for (const auto& text : listen.listen) {
    std::string error;
    auto a = ws::parse_listen_address(text, config.home, error);
    if (!a) {
      std::fprintf(stderr, "parley: --listen: %s\n", error.c_str());
      return 2;
    }
    if (a->what == ws::listen_address::kind::stdio)
      stdio = true;
    else
      ws_options.addresses.push_back(*a);
  }
  // Every connection is a descriptor: with listeners, as many as the system
  // lets this process have (commands inherit the raised limit), and the
  // caps' defaults follow from that.
  uint64_t open_files = 0;
  if (!ws_options.addresses.empty()) {
    open_files = ws::raise_open_files_limit();
    ws_options.caps = ws::default_cap_limits(open_files);
  }
  if (listen.ws_max_connections > 0) ws_options.caps.connections = listen.ws_max_connections;
  if (listen.ws_max_pending > 0) ws_options.caps.pending = listen.ws_max_pending;
  if (listen.ws_max_pending_per_address > 0)
    ws_options.caps.pending_per_address = listen.ws_max_pending_per_address;
  auto home = config.home;
  auto ws_options_caps = ws_options.caps;
  config.encode_events = true;  // JSON clients: encode where events are made
  std::unique_ptr<runtime> owned;
  std::unique_ptr<ws::server> listeners;
  try {
    owned = std::make_unique<runtime>(std::move(config));
    if (!ws_options.addresses.empty())
      listeners = std::make_unique<ws::server>(*owned, std::move(ws_options));
  } catch (const std::exception& e) {
    PARLEY_ERROR("app-server event=start_failed error={}", e.what());
    std::fprintf(stderr, "parley: %s\n", e.what());
    if (owned) owned->shutdown();
    return 1;
  }
  auto& rt = *owned;
  if (rt.config().cluster) {
    // Other nodes' clients get a session here for the threads that live here.
    connection_options base;
    base.config = rt.shared_config();
    base.telemetry = rt.telemetry();
    rt.serve_cluster_sessions([sys = &rt.system(), threads = rt.threads(), base](
                                  const cluster::session_open& open,
                                  const cluster::session_relay_actor& relay) {
      return open_remote_session(*sys, threads, base, open, relay);
    });
  }
  PARLEY_INFO("app-server event=started home={} approval_timeout_ms={}", home,
              rt.config().approval_timeout.count());
  if (listeners) {
    PARLEY_INFO("ws event=limits open_files={} max_connections={} max_pending={} "
                "max_pending_per_address={} handshake_timeout_ms={} idle_timeout_ms={}",
                open_files, ws_options_caps.connections, ws_options_caps.pending,
                ws_options_caps.pending_per_address, listen.ws_handshake_timeout.count(),
                listen.ws_idle_timeout.count());
    for (const auto& url : listeners->bound())
      std::fprintf(stderr, "parley app-server listening on %s\n", url.c_str());
  }
  std::fflush(stderr);
  if (stdio)
    serve_stdio(rt, signal_fd);
  else {
    wait_for_stop_signal(signal_fd, listeners.get());
    rt.seal_store();  // the server goes away: pending work stays on disk
  }
  listeners.reset();  // every WebSocket client's session ends while the runtime runs
  rt.shutdown();
  if (signal_fd >= 0) ::close(signal_fd);
  PARLEY_INFO("app-server event=stopped");
  return 0;
}

}  // namespace parley
