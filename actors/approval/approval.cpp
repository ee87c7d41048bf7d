#include "actors/approval/approval.hpp"

#include <atomic>
#include <caf/sec.hpp>

#include "actors/approval/hooks/external_hook_runner.hpp"
#include "actors/approval/rules/rules_book.hpp"
#include "actors/core/approval_stats.hpp"
#include "actors/core/handlers.hpp"

namespace parley {

approval_plan plan_for(const runtime_services& svc, const session_grants& grants,
                       const approval_ask& ask, policy_verdict verdict) {
  std::shared_ptr<const rules::rule_set> rules;
  if (svc.rules) rules = svc.rules->current();
  const auto& cfg = *svc.config;
  return plan_approval(verdict, ask, rules.get(), grants,
                       hook_set{&cfg.hooks, &cfg.external_hooks});
}

approval_outcome outcome_of_error(const caf::error& err) {
  approval_outcome out;
  out.detail = message_of(err);
  if (err == caf::sec::request_timeout) {
    out.how = approval_outcome::kind::timed_out;
  } else if (err.category() == caf::atom("parley")) {
    switch (static_cast<errc>(err.code())) {
      case errc::client_error:
        out.how = approval_outcome::kind::client_error;
        break;
      case errc::malformed_reply:
        out.how = approval_outcome::kind::malformed;
        break;
      case errc::transport_closed:
        out.how = approval_outcome::kind::transport_closed;
        break;
      default:
        out.how = approval_outcome::kind::cancelled;
    }
  } else {
    // The conversation or the client is gone: nobody can decide any more.
    out.how = approval_outcome::kind::transport_closed;
  }
  return out;
}

namespace {

using self_ptr = approval_actor::stateful_pointer<approval_state>;
using hooks::verdict;

// -- audit and telemetry -----------------------------------------------------

/// What the audit log says about an approval (the shared fields).
nlohmann::json audit_fields(const approval_ask& ask) {
  nlohmann::json j{{"approval", ask.key},
                   {"thread", ask.thread_id},
                   {"turn", ask.turn_id()},
                   {"item", ask.item_id()},
                   {"type", hooks::to_string(ask.what)},
                   {"cwd", ask.cwd},
                   {"digest", ask.digest}};
  if (ask.is_file_change()) {
    auto paths = nlohmann::json::array();
    for (const auto& c : ask.changes) paths.push_back(c.path);
    j["paths"] = std::move(paths);
  } else {
    j["command"] = protocol::or_null(ask.command.command);
  }
  return j;
}

void record_outcome(self_ptr self, const approval_outcome& out) {
  auto& st = self->state;
  auto latency = std::chrono::steady_clock::now() - st.asked_at;
  bool runs = out.how == approval_outcome::kind::decided && out.decision.allows_run();
  st.svc.telemetry->approvals.on_outcome(to_string(out.how), out.stage, runs, latency);
  if (!st.svc.audit) return;
  auto fields = audit_fields(st.ask);
  fields["stage"] = out.stage;
  fields["latency_ms"] = std::chrono::duration<double, std::milli>(latency).count();
  fields["runs"] = runs;
  if (out.how == approval_outcome::kind::decided)
    fields["decision"] = protocol::to_string(out.decision.value);
  if (!out.detail.empty()) fields["detail"] = out.detail;
  self->send(st.svc.audit, atom::append::value,
             audit::record{to_string(out.how), std::move(fields)});
}

approval_ref ref_of(const approval_ask& ask) {
  return approval_ref{ask.key, ask.turn_id(), ask.item_id()};
}

/// Codex's order: a file change's item starts before the thread waits on
/// it; a command's waiting status comes first, then its item.
void announce(self_ptr self) {
  auto& st = self->state;
  auto started = [&] {
    if (st.item_started) self->send(st.conversation, atom::event::value, st.item_started);
  };
  if (st.ask.is_file_change()) started();
  if (st.plan.waits()) self->send(st.conversation, atom::awaiting::value, ref_of(st.ask));
  if (!st.ask.is_file_change()) started();
}

/// Delivers the one outcome of this approval and ends it. The conversation
/// hears first (the thread no longer waits; a prompt still open is void),
/// so whatever the turn does next is ordered after it.
void finish(self_ptr self, approval_outcome out) {
  auto& st = self->state;
  if (st.resolved) return;  // exactly one outcome
  st.resolved = true;
  if (st.plan.waits())
    self->send(st.conversation, atom::settled::value, ref_of(st.ask), st.prompt_open);
  out.digest = st.ask.digest;
  PARLEY_DEBUG("approval key={} event=outcome how={} stage={} detail=\"{}\"", st.ask.key,
               to_string(out.how), out.stage, out.detail);
  record_outcome(self, out);
  st.promise.deliver(std::move(out));
  self->quit();
}

void decide(self_ptr self, protocol::approval_decision d, std::string stage, std::string detail) {
  approval_outcome out;
  out.how = approval_outcome::kind::decided;
  out.decision = std::move(d);
  out.stage = std::move(stage);
  out.detail = std::move(detail);
  finish(self, std::move(out));
}

// -- stages ------------------------------------------------------------------

void continue_hooks(self_ptr self);

/// Applies one stage's verdict. Returns false when the approval is over.
bool take_verdict(self_ptr self, const std::string& stage, const verdict& v) {
  auto& st = self->state;
  switch (v.what) {
    case verdict::kind::deny:
      decide(self, protocol::approval_decision::decline(), stage,
             v.reason.empty() ? "denied by " + stage : v.reason);
      return false;
    case verdict::kind::allow:
      if (!st.allowed_by) {
        st.allowed_by = stage;
        st.allow_reason = v.reason;
      }
      return true;
    case verdict::kind::abstain:
      return true;
  }
  return true;
}

/// The last stage: nobody denied; approve if a stage allowed (and no rule
/// insists on asking), otherwise ask the client through the conversation.
void ask_client(self_ptr self) {
  auto& st = self->state;
  if (st.allowed_by && !st.must_ask) {
    decide(self, protocol::approval_decision::accept(), *st.allowed_by, st.allow_reason);
    return;
  }
  auto key = st.ask.key;
  st.prompt_open = true;
  self->request(st.conversation, st.svc.config->approval_timeout, atom::ask::value, st.ask)
      .then(
          [self, key](protocol::approval_decision& d) {
            PARLEY_DEBUG("approval key={} event=decided decision={}", key,
                         protocol::to_string(d.value));
            self->state.prompt_open = false;
            decide(self, std::move(d), "client", {});
          },
          [self, key](caf::error& err) {
            auto out = outcome_of_error(err);
            if (out.how == approval_outcome::kind::timed_out) {
              // Fail closed; settling voids the client's prompt.
              PARLEY_INFO("approval key={} event=timeout", key);
              out.stage = "deadline";
            } else {
              self->state.prompt_open = false;  // the client (or its loss) answered
              PARLEY_INFO("approval key={} event=failed outcome={} detail={}", key,
                          to_string(out.how), out.detail);
              out.stage = out.how == approval_outcome::kind::cancelled ? "interrupt" : "client";
            }
            finish(self, std::move(out));
          });
}

/// Names the stage whose answer may come later (as hook_reply with the
/// returned token); any other token is a late or foreign answer.
uint64_t reserve_token(self_ptr self, std::string stage) {
  static std::atomic<uint64_t> tokens{0};
  auto& st = self->state;
  st.waiting_token = ++tokens;
  st.waiting_stage = std::move(stage);
  return st.waiting_token;
}

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
  ask_client(self);
}

void start(self_ptr self) {
  auto& st = self->state;
  st.started = true;
  st.asked_at = std::chrono::steady_clock::now();
  st.svc.telemetry->approvals.on_requested();
  if (st.svc.audit)
    self->send(st.svc.audit, atom::append::value, audit::record{"requested", audit_fields(st.ask)});
  announce(self);
  // Rules: what the deployment wrote down (as planned: the rules are not
  // read again). "ask" keeps the client in the loop.
  if (const auto& m = st.plan.rule) {
    switch (m->verdict) {
      case rules::decision::deny:
        return decide(self, protocol::approval_decision::decline(), "rules", m->explanation);
      case rules::decision::allow:
        take_verdict(self, "rules", verdict::allow(m->explanation));
        break;
      case rules::decision::ask:
        st.must_ask = true;
        break;
    }
  }
  // Session grants: what the user already accepted for this thread.
  if (st.plan.granted && !take_verdict(self, "grants", verdict::allow("accepted for the session")))
    return;
  st.review = review_of(st.ask);
  continue_hooks(self);
}

// -- what the approval hears ---------------------------------------------------

/// A bug in a stage must not leave the prompt open or the turn waiting: the
/// approval settles (fail closed) before it goes down.
caf::error on_crash(self_ptr self, const std::exception_ptr& e) {
  auto what = "approval failed: " + describe_exception(e);
  PARLEY_ERROR("approval key={} event=crashed what=\"{}\"", self->state.ask.key, what);
  approval_outcome out;
  out.how = approval_outcome::kind::client_error;
  out.detail = what;
  out.stage = "approval";
  finish(self, std::move(out));
  return make_error(errc::internal, what);
}

/// The turn interrupted (its exit signal, forwarded or through the link):
/// the approval settles cancelled, voiding the client's prompt, and the
/// turn, which waits for this outcome, ends the item after that. A hook
/// program's runner that crashed fails its stage.
void on_exit_signal(self_ptr self, const caf::exit_msg& em) {
  if (!em.reason) return;  // the turn finished normally, or a linked hook run ended
  auto& s = self->state;
  if (em.source == s.runner_addr) {
    s.runner_addr = caf::actor_addr{};
    if (!s.resolved && s.waiting_token != 0)
      decide(self, protocol::approval_decision::decline(), s.waiting_stage,
             s.waiting_stage + " failed: " + caf::to_string(em.reason));
    return;
  }
  PARLEY_DEBUG("approval key={} event=cancelled reason={}", s.ask.key, caf::to_string(em.reason));
  if (s.started && !s.resolved) {
    approval_outcome out;
    out.how = approval_outcome::kind::cancelled;
    out.detail = "turn interrupted";
    out.stage = "interrupt";
    finish(self, std::move(out));
  }
  self->quit();  // an orderly end: the turn has the outcome
}

caf::result<approval_outcome> on_decide(self_ptr self) {
  auto& s = self->state;
  auto rp = self->make_response_promise<approval_outcome>();
  if (s.started) {
    rp.deliver(make_error(errc::invalid_request, "approval already started"));
    return rp;
  }
  s.promise = rp;
  start(self);
  return rp;
}

/// An async hook answered through its handle (or too late).
void on_hook_reply(self_ptr self, uint64_t token, const hooks::verdict& v) {
  auto& s = self->state;
  if (s.resolved || token == 0 || token != s.waiting_token) {
    PARLEY_INFO("approval key={} event=late_hook_answer verdict={} ignored", s.ask.key,
                hooks::to_string(v.what));
    return;
  }
  s.waiting_token = 0;
  if (take_verdict(self, s.waiting_stage, v)) continue_hooks(self);
}

void on_hook_deadline(self_ptr self, uint64_t token) {
  auto& s = self->state;
  if (s.resolved || token != s.waiting_token) return;  // answered in time
  s.waiting_token = 0;
  PARLEY_INFO("approval key={} event=hook_timeout hook={}", s.ask.key, s.waiting_stage);
  decide(self, protocol::approval_decision::decline(), s.waiting_stage, "approval timeout");
}

}  // namespace

approval_actor::behavior_type approval(approval_actor::stateful_pointer<approval_state> self,
                                       conversation_actor conversation, approval_ask ask,
                                       approval_plan plan, runtime_services svc,
                                       notification_ptr item_started) {
  install_default_handlers(self, "approval");
  auto& st = self->state;
  st.conversation = std::move(conversation);
  st.ask = std::move(ask);
  st.plan = std::move(plan);
  st.svc = std::move(svc);
  st.item_started = std::move(item_started);
  st.live = count_live(st.svc.telemetry, &live_counters::approvals);
  self->set_exception_handler(
      [self](caf::scheduled_actor*, std::exception_ptr& e) { return on_crash(self, e); });
  self->set_exit_handler([self](caf::exit_msg& em) { on_exit_signal(self, em); });
  return {
      [self](atom::decide) { return on_decide(self); },
      [self](atom::hook_reply, uint64_t token, hooks::verdict& v) {
        on_hook_reply(self, token, v);
      },
      [self](atom::deadline, uint64_t token) { on_hook_deadline(self, token); },
  };
}

}  // namespace parley
