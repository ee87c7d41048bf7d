#include "actors/threads/exec.hpp"

#include "actors/core/handlers.hpp"

namespace parley {

exec_actor::behavior_type exec(exec_actor::stateful_pointer<exec_state> self,
                                       process_sink_actor turn, exec_request request,
                                       std::shared_ptr<process_reactor> reactor,
                                       std::shared_ptr<runtime_telemetry> telemetry) {
  install_default_handlers(self, "exec");
  self->state.live = count_live(telemetry, &live_counters::execs);
  self->state.turn = turn;
  if (!request.refusal.empty()) {
    // Nothing starts: the turn hears why, as a start that never happened.
    exit_info info;
    info.not_started = std::move(request.refusal);
    self->send(turn, atom::output::value, "parley: " + info.not_started + "\n");
    self->send(turn, atom::exited::value, std::move(info));
    self->quit();
    return {[](atom::output, std::string&) {}, [](atom::exited, exit_info&) {},
            [](atom::timeout) {}};
  }
  // Queued: the reactor's spawner thread creates the process, so this
  // worker (and every decision waiting for one) never waits on it.
  auto id = reactor->spawn(std::move(request.spec), caf::actor_cast<process_sink_actor>(self));
  self->state.process = id;
  // Whatever ends this actor first (interrupt, shutdown, a crash), the
  // process group must not outlive it, and a start still queued must never
  // happen. The reactor ignores the kill once the command has been reaped.
  auto finished = std::make_shared<bool>(false);
  self->attach_functor([reactor, finished, id] {
    if (!*finished) reactor->kill(id);
  });
  // The timeout is a message to itself: the kill's exit arrives as any exit
  // does, and says which limit ended it.
  if (request.timeout.count() > 0) self->delayed_send(self, request.timeout, atom::timeout::value);
  return {
      [self, reactor, finished, id, ms = request.timeout.count()](atom::timeout) {
        if (*finished || !self->state.ended_by.empty()) return;
        self->state.ended_by = "timed out after " + std::to_string(ms) + " ms";
        reactor->kill(id);
      },
      [self](atom::output, std::string& chunk) {
        self->send(self->state.turn, atom::output::value, std::move(chunk));
      },
      [self, finished](atom::exited, exit_info& info) {
        *finished = true;
        // Could not start: the failure is the command's output.
        if (!info.not_started.empty())
          self->send(self->state.turn, atom::output::value,
                     "parley: cannot start command: " + info.not_started + "\n");
        info.ended_by = self->state.ended_by;
        self->send(self->state.turn, atom::exited::value, std::move(info));
        self->quit();
      },
  };
}

}  // namespace parley
