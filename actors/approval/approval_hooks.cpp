// The hook stages of an approval: in-process hooks (answering at once or
// later through their handle) and external hook programs, each under its
// deadline; a hook that fails denies.

#include "actors/approval/approval_detail.hpp"
#include "actors/approval/hooks/external_hook_runner.hpp"
#include "actors/core/log.hpp"

namespace parley::approval_detail {

namespace {

/// Runs one external hook program; its verdict continues the pipeline.
void run_external_hook(self_ptr self, const hooks::external_hook_spec& spec) {
  auto& st = self->state;
  auto stage = "hook:" + spec.name;
  auto token = reserve_token(self, stage);
  // Linked: an interrupted turn ends this approval, and with it the program.
  auto runner = self->spawn<caf::linked>(external_hook_runner, spec,
                                         hooks::to_json(st.review).dump(), st.svc.reactor);
  st.runner_addr = runner.address();
  // The runner enforces the program's deadline itself; this margin only
  // covers a runner that could not answer at all.
  self->request(runner, spec.timeout + std::chrono::seconds(2), atom::decide::value)
      .then(
          [self, token](hooks::verdict& v) {
            auto& s = self->state;
            if (s.resolved || token != s.waiting_token) return;
            s.waiting_token = 0;
            if (take_verdict(self, s.waiting_stage, v)) continue_hooks(self);
          },
          [self, token, stage](caf::error& err) {
            auto& s = self->state;
            if (s.resolved || token != s.waiting_token) return;
            s.waiting_token = 0;
            decide(self, protocol::approval_decision::decline(), stage,
                   stage + " failed: " + caf::to_string(err));
          });
}

}  // namespace

/// Runs the hooks from `next_hook` on (in-process ones, then external
/// programs), until one waits or all answered; then the client stage.
void continue_hooks(self_ptr self) {
  auto& st = self->state;
  const auto& hooks = st.svc.config->hooks;
  const auto& programs = st.svc.config->external_hooks;
  while (st.next_hook < hooks.size() + programs.size()) {
    auto index = st.next_hook++;
    if (index >= hooks.size()) {
      const auto& spec = programs[index - hooks.size()];
      if (!spec.reviews(st.review.what)) continue;
      return run_external_hook(self, spec);
    }
    const auto& hook = hooks[index];
    auto stage = "hook:" + hook->name();
    hooks::hook_reply reply;
    try {
      hook->prepare(st.review);
      hooks::decision_handle handle{caf::actor_cast<caf::weak_actor_ptr>(self->ctrl()),
                                    reserve_token(self, stage)};
      switch (st.review.what) {
        case hooks::action_kind::command:
          reply = hook->review_command(st.review, handle);
          break;
        case hooks::action_kind::file_change:
          reply = hook->review_file(st.review, handle);
          break;
        case hooks::action_kind::tool:
          reply = hook->review_tool(st.review, handle);
          break;
      }
    } catch (const std::exception& e) {
      reply = hooks::hook_reply::deny(stage + " failed: " + e.what());
    } catch (...) {
      reply = hooks::hook_reply::deny(stage + " failed");
    }
    if (reply.async) {
      PARLEY_DEBUG("approval key={} event=hook_waiting hook={}", st.ask.key, stage);
      self->delayed_send(self, hook->timeout(), atom::deadline::value, st.waiting_token);
      return;  // hook_reply or deadline continues
    }
    st.waiting_token = 0;  // answered at once: the reserved deadline is void
    if (!take_verdict(self, stage, reply.now)) return;
  }
  ask_clients(self);
}

}  // namespace parley::approval_detail
