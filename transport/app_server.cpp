#include "transport/app_server.hpp"

#include <caf/scoped_actor.hpp>
#include <csignal>
#include <cstdio>
#include <memory>
#include <sys/signalfd.h>
#include <unistd.h>

#include "actors/core/log.hpp"
#include "actors/runtime/runtime.hpp"
#include "transport/connection.hpp"
#include "transport/line_reader.hpp"
#include "transport/line_writer.hpp"

namespace parley {

int run_app_server(runtime_config config) {
  // A vanished reader must show up as EPIPE in the writer, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  // SIGINT/SIGTERM/SIGHUP end the input like EOF does (orderly shutdown). They
  // are blocked in every thread and read from a signalfd by the line reader.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  int signal_fd = ::signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);

  auto home = config.home;
  config.encode_events = true;  // JSON clients: encode where events are made
  std::unique_ptr<runtime> owned;
  try {
    owned = std::make_unique<runtime>(std::move(config));
  } catch (const std::exception& e) {
    PARLEY_ERROR("app-server event=start_failed error={}", e.what());
    std::fprintf(stderr, "parley: %s\n", e.what());
    return 1;
  }
  auto& rt = *owned;
  PARLEY_INFO("app-server event=started home={} approval_timeout_ms={}", home,
              rt.config().approval_timeout.count());
  auto writer = rt.system().spawn<caf::detached>(line_writer, STDOUT_FILENO);
  connection_options options;
  options.config = rt.shared_config();
  options.telemetry = rt.telemetry();
  options.shutdown_on_close = true;
  auto conn = rt.system().spawn<caf::detached>(connection, rt.threads(), writer, options);
  {
    line_reader reader{STDIN_FILENO, caf::actor_cast<caf::actor>(conn), signal_fd};
    caf::scoped_actor self{rt.system()};
    self->wait_for(conn);
  }
  rt.shutdown();
  if (signal_fd >= 0) ::close(signal_fd);
  PARLEY_INFO("app-server event=stopped");
  return 0;
}

}  // namespace parley
