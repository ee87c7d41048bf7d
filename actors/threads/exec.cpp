#include "actors/threads/exec.hpp"

#include "actors/core/handlers.hpp"

namespace parley {

process_sink_actor::behavior_type exec(process_sink_actor::stateful_pointer<exec_state> self,
                                       process_sink_actor turn, std::string command,
                                       std::string cwd, std::shared_ptr<process_reactor> reactor,
                                       std::shared_ptr<runtime_telemetry> telemetry,
                                       std::shared_ptr<const std::vector<std::string>> env) {
  install_default_handlers(self, "exec");
  self->state.live = count_live(telemetry, &live_counters::execs);
  self->state.turn = turn;
  // Queued: the reactor's spawner thread creates the process, so this
  // worker (and every decision waiting for one) never waits on it.
  auto id = reactor->spawn(command, cwd, caf::actor_cast<process_sink_actor>(self), std::move(env));
  self->state.process = id;
  // Whatever ends this actor first (interrupt, shutdown, a crash), the
  // process group must not outlive it, and a start still queued must never
  // happen. The reactor ignores the kill once the command has been reaped.
  auto finished = std::make_shared<bool>(false);
  self->attach_functor([reactor, finished, id] {
    if (!*finished) reactor->kill(id);
  });
  return {
      [self](atom::output, std::string& chunk) {
        self->send(self->state.turn, atom::output::value, std::move(chunk));
      },
      [self, finished](atom::exited, const exit_info& info) {
        *finished = true;
        // Could not start: the failure is the command's output.
        if (!info.not_started.empty())
          self->send(self->state.turn, atom::output::value,
                     "parley: cannot start command: " + info.not_started + "\n");
        self->send(self->state.turn, atom::exited::value, info);
        self->quit();
      },
  };
}

}  // namespace parley
