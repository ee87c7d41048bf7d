#include "actors/exec.hpp"

#include "actors/handlers.hpp"

namespace parley {

exec_actor::behavior_type exec(exec_actor::stateful_pointer<exec_state> self, turn_actor turn,
                               std::string command, std::string cwd,
                               std::shared_ptr<process_reactor> reactor) {
  install_default_handlers(self, "exec");
  self->state.turn = turn;
  auto pid = reactor->spawn(command, cwd, caf::actor_cast<exec_actor>(self));
  if (!pid) {
    // Report the failure as the command's output and a failed exit.
    self->send(turn, atom::output::value,
               "parley: cannot start command: " + message_of(pid.error()) + "\n");
    self->send(turn, atom::exited::value, exit_info{127, 0, 0});
    self->quit();
    return {[](atom::output, const std::string&) {}, [](atom::exited, const exit_info&) {}};
  }
  self->state.pid = *pid;
  // Whatever ends this actor first (interrupt, shutdown, a crash), the
  // process group must not outlive it. The reactor ignores the kill once the
  // command has been reaped.
  auto finished = std::make_shared<bool>(false);
  self->attach_functor([reactor, finished, p = *pid] {
    if (!*finished) reactor->kill(p);
  });
  return {
      [self](atom::output, std::string& chunk) {
        self->send(self->state.turn, atom::output::value, std::move(chunk));
      },
      [self, finished](atom::exited, const exit_info& info) {
        *finished = true;
        self->send(self->state.turn, atom::exited::value, info);
        self->quit();
      },
  };
}

}  // namespace parley
