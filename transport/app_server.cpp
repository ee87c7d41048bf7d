#include "transport/app_server.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>

#include "actors/core/log.hpp"
#include "actors/runtime/runtime.hpp"
#include "transport/connection.hpp"
#include "transport/line_reader.hpp"
#include "transport/fd_writer.hpp"
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

/// What the stdio client may fall behind by default: the WebSocket's bound.
constexpr size_t default_stdio_max_queue = size_t{64} << 20;

/// stdio and the Unix socket: the local operator, one tenant.
tenant_identity local_operator(const listen_options& listen) {
  tenant_identity who;
  who.tenant = listen.local_tenant.empty() ? tenant_identity::default_tenant : listen.local_tenant;
  who.subject = "local";
  who.local = true;
  return who;
}

/// One client on stdin/stdout until its input ends or a stop signal comes;
/// then every thread is shut down (pending approvals resolve as cancelled;
/// after a signal, with the store sealed, they stay pending on disk).
void serve_stdio(runtime& rt, int signal_fd, const tenant_identity& local, size_t max_queue) {
  auto out = std::make_shared<fd_writer>(STDOUT_FILENO, max_queue, rt.telemetry());
  auto writer = rt.system().spawn<caf::detached>(line_writer, out);
  connection_options options;
  options.config = rt.shared_config();
  options.telemetry = rt.telemetry();
  options.cluster_router = rt.thread_router();
  options.shutdown_on_close = true;
  options.identity = local;
  options.mcp_hub = rt.mcp_hub();
  // The connection hands its lines to the writing thread a burst at a time;
  // the writer actor only closes the output.
  options.write_burst = [out](std::vector<std::string>& lines) { out->push_all(lines); };
  auto conn = rt.system().spawn<caf::detached>(connection, rt.threads(), writer, options);
  // A client behind holds its threads' model streams; one that fell past
  // the bound is given up on: its input ends, and what it sent but was not
  // yet run is dropped (it never reads what the server would still tell it).
  fd_writer::hooks hooks;
  // High priority, on every hop: a signal that waited behind the events
  // already queued (as many as the streams can send meanwhile) would come
  // too late (issue 22).
  hooks.on_pressure = [conn](bool on) {
    caf::anon_send<caf::message_priority::high>(conn, atom::pressure::value, on);
  };
  hooks.on_overflow = [conn] { caf::anon_send(conn, atom::eof::value, atom::gone::value); };
  out->set_hooks(std::move(hooks));
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

/// Whether a stop signal (SIGINT/SIGTERM) came within `wait`; SIGHUP is
/// consumed (a wss:// listener reads its certificate again).
bool stop_signal_within(int signal_fd, ws::server* listeners, std::chrono::milliseconds wait) {
  pollfd p{signal_fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
  signalfd_siginfo info{};
  if (::read(signal_fd, &info, sizeof(info)) != static_cast<ssize_t>(sizeof(info))) return false;
  if (info.ssi_signo == SIGHUP) {
    if (listeners && listeners->serves_tls()) listeners->reload_tls();
    return false;
  }
  return true;
}

/// The drain after a stop signal (issue 22): /readyz says 503, the
/// listeners accept no new connection, no new turn starts; running turns go
/// on until each has finished or waits on an approval (no work is left that
/// needs no person; the approval stays pending on disk and is asked again
/// after the restart), for at most `bound`. A second signal ends it at once.
void drain(runtime& rt, ws::server* listeners, int signal_fd, std::chrono::milliseconds bound) {
  auto& t = *rt.telemetry();
  t.draining.store(true, std::memory_order_release);
  if (listeners) listeners->stop_accepting();
  auto started = std::chrono::steady_clock::now();
  auto busy = [&t] {
    // Each pending approval holds its turn: a turn past it has nothing to do.
    auto turns = t.live.turns.load(std::memory_order_relaxed);
    return turns - t.approvals.snapshot().pending > 0;
  };
  PARLEY_INFO("app-server event=draining turns={} pending_approvals={} timeout_ms={}",
              t.live.turns.load(), t.approvals.snapshot().pending, bound.count());
  const char* how = "drained";
  for (;;) {
    if (!busy()) break;
    auto left = bound - std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started);
    if (left.count() <= 0) {
      how = "timed_out";
      break;
    }
    if (stop_signal_within(signal_fd, listeners, std::min(left, std::chrono::milliseconds(50)))) {
      how = "second_signal";
      break;
    }
  }
  PARLEY_INFO("app-server event=drain_end how={} turns={} pending_approvals={} ms={}", how,
              t.live.turns.load(), t.approvals.snapshot().pending,
              std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count());
}

/// Where the server listens, for people and scripts to read at start: a
/// line in prose, or with --log-format=json a log line like every other.
void announce(const char* what, const std::string& url) {
  if (log::json_format())
    PARLEY_INFO("app-server event=listening what=\"{}\" url={}", what, url);
  else
    std::fprintf(stderr, "parley app-server %s %s\n", what, url.c_str());
}

}  // namespace

int run_app_server(runtime_config config, const listen_options& listen) {
  // A vanished reader must show up as EPIPE in the writer, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  int signal_fd = block_stop_signals();
  bool stdio = listen.listen.empty();
  ws::server_options ws_options;
  std::string auth_error;
  ws::auth_claims claims;
  claims.tenant_claim = listen.ws_tenant_claim;
  claims.issuer = listen.ws_issuer;
  claims.audience = listen.ws_audience;
  claims.leeway_seconds = listen.ws_leeway_seconds;
  auto auth = ws::load_auth(listen.ws_auth, listen.ws_token_file, listen.ws_shared_secret_file,
                            auth_error, claims);
  if (!auth) {
    std::fprintf(stderr, "parley: %s\n", auth_error.c_str());
    return 2;
  }
  ws_options.auth = std::move(*auth);
  ws_options.local = local_operator(listen);
  // --metrics-listen: a listener of its own that answers plain HTTP only.
  ws::server_options metrics_options;
  if (!listen.metrics_listen.empty()) {
    std::string error;
    auto a = ws::parse_listen_address("ws://" + listen.metrics_listen, config.home, error);
    if (!a) {
      std::fprintf(stderr, "parley: --metrics-listen: %s\n", error.c_str());
      return 2;
    }
    metrics_options.addresses.push_back(*a);
    metrics_options.auth = ws_options.auth;
    metrics_options.plain_http_only = true;
    metrics_options.handshake_timeout = listen.ws_handshake_timeout;
    metrics_options.caps = ws::default_cap_limits(1024);
  }
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
  std::unique_ptr<ws::server> metrics_listener;
  try {
    owned = std::make_unique<runtime>(std::move(config));
    if (!ws_options.addresses.empty())
      listeners = std::make_unique<ws::server>(*owned, std::move(ws_options));
    if (!metrics_options.addresses.empty())
      metrics_listener = std::make_unique<ws::server>(*owned, std::move(metrics_options));
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
    for (const auto& url : listeners->bound()) announce("listening on", url);
  }
  if (metrics_listener)
    for (auto url : metrics_listener->bound())
      announce("metrics on", url.replace(0, 2, "http"));
  std::fflush(stderr);
  if (stdio)
    serve_stdio(rt, signal_fd, local_operator(listen),
                listen.stdio_max_queue > 0 ? listen.stdio_max_queue : default_stdio_max_queue);
  else {
    wait_for_stop_signal(signal_fd, listeners.get());
    if (listen.drain_timeout.count() > 0)
      drain(rt, listeners.get(), signal_fd, listen.drain_timeout);
    rt.seal_store();  // the server goes away: pending work stays on disk
  }
  metrics_listener.reset();
  listeners.reset();  // every WebSocket client's session ends while the runtime runs
  rt.shutdown();
  if (signal_fd >= 0) ::close(signal_fd);
  PARLEY_INFO("app-server event=stopped");
  return 0;
}

}  // namespace parley
