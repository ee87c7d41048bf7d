// The actor that runs one hook program for one review request. Three things
// race: the program's exit, its deadline and the caller's `decide` request.
// The first of exit/deadline (or too much output) fixes the verdict; the
// verdict goes out once someone asked, and then the runner quits.

#include <string>

#include "actors/core/handlers.hpp"
#include "actors/approval/hooks/external_hook_runner.hpp"
#include "actors/core/log.hpp"

namespace parley {

namespace {

using hook_self = hook_runner_actor::stateful_pointer<external_hook_state>;

// Answers everyone waiting, once there is a verdict; then the runner is done.
void answer(hook_self self) {
  auto& st = self->state;
  if (!st.result || st.waiting.empty()) return;
  for (auto& rp : st.waiting) rp.deliver(*st.result);
  st.waiting.clear();
  self->quit();
}

// Fixes the verdict (first caller wins) and logs the run.
void conclude(hook_self self, hooks::verdict v, const std::string& how_ended) {
  auto& st = self->state;
  if (st.result) return;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now()
                                                                  - st.started)
                .count();
  PARLEY_DEBUG("external_hook name={} pid={} exit={} duration_ms={} decision={} reason={}",
               st.spec.name, st.pid, how_ended, ms, hooks::to_string(v.what), v.reason);
  st.result = std::move(v);
  answer(self);
}

}  // namespace

hook_runner_actor::behavior_type external_hook_runner(
    hook_runner_actor::stateful_pointer<external_hook_state> self, hooks::external_hook_spec spec,
    std::string request_json, std::shared_ptr<process_reactor> reactor) {
  install_default_handlers(self, "external_hook");
  auto& st = self->state;
  st.spec = std::move(spec);
  st.started = std::chrono::steady_clock::now();

  // `decide` may come before or after the verdict: park it until both exist.
  auto decide = [self](atom::decide) -> caf::result<hooks::verdict> {
    auto rp = self->make_response_promise<hooks::verdict>();
    self->state.waiting.push_back(rp);
    answer(self);
    return rp;
  };

  spawn_spec run;
  run.argv = st.spec.argv;
  run.stdin_data = std::move(request_json) + "\n";
  // stdout is the hook's answer; its diagnostics go to parley's stderr.
  run.merge_stderr = false;
  // A hook is the operator's own program, not something a model asked to
  // run: it keeps parley's whole environment (run.env stays null), so it may
  // use credentials the shell environment policy keeps from commands.
  // Queued: the reactor's spawner thread creates the process.
  auto id = reactor->spawn(std::move(run), caf::actor_cast<process_sink_actor>(self));
  st.process = id;
  // Whatever ends this runner (a kill from its owner, shutdown), the hook's
  // process group must not outlive it (nor start later). After the exit the
  // reactor ignores the kill.
  auto reaped = std::make_shared<bool>(false);
  self->attach_functor([reactor, reaped, id] {
    if (!*reaped) reactor->kill(id);
  });
  self->delayed_send(caf::actor_cast<hook_runner_actor>(self), st.spec.timeout,
                     atom::timeout::value, id);
  return {
      decide,
      [self, reactor](atom::output, std::string& chunk) {
        auto& s = self->state;
        if (s.result) return;  // decided already: the rest is noise
        if (s.output.size() + chunk.size() > hooks::max_hook_output) {
          reactor->kill(s.process);
          conclude(self,
                   hooks::verdict::deny("hook " + s.spec.name + " answered garbage: more than "
                                        + std::to_string(hooks::max_hook_output)
                                        + " bytes of output"),
                   "killed");
          return;
        }
        s.output += chunk;
      },
      [self, reaped](atom::exited, const exit_info& info) {
        *reaped = true;
        auto& s = self->state;
        s.pid = info.pid;
        if (!info.not_started.empty())
          conclude(self,
                   hooks::verdict::deny("hook " + s.spec.name
                                        + " could not start: " + info.not_started),
                   "none");
        else if (info.exit_code != 0)
          conclude(self,
                   hooks::verdict::deny("hook " + s.spec.name + " exited with code "
                                        + std::to_string(info.exit_code)),
                   std::to_string(info.exit_code));
        else
          conclude(self, hooks::parse_hook_output(s.spec.name, s.output), "0");
      },
      [self, reactor](atom::timeout, uint64_t) {
        auto& s = self->state;
        if (s.result) return;
        reactor->kill(s.process);
        PARLEY_INFO("external_hook name={} pid={} event=timeout timeout_ms={}", s.spec.name,
                    s.pid, s.spec.timeout.count());
        conclude(self, hooks::verdict::deny("approval timeout"), "killed");
      },
  };
}

}  // namespace parley
