#include "actors/approval/approval.hpp"
#include "actors/core/tenant.hpp"

#include <atomic>
#include <caf/sec.hpp>
#include <caf/send.hpp>

#include "actors/approval/approval_detail.hpp"
#include "actors/approval/audit/audit_log.hpp"
#include "actors/approval/rules_book.hpp"
#include "actors/core/action_records.hpp"
#include "actors/core/approval_stats.hpp"
#include "actors/core/handlers.hpp"
#include "protocol/client_requests.hpp"

namespace parley {

approval_plan plan_for(const runtime_services& svc, const session_grants& grants,
                       const approval_ask& ask, policy_verdict verdict) {
  std::shared_ptr<const rules::rule_set> rules;
  if (svc.rules) rules = svc.rules->current(ask.tenant.empty() ? tenant_identity::default_tenant
                                                               : ask.tenant);
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

namespace approval_detail {

namespace {

using hooks::verdict;

// -- audit and telemetry -----------------------------------------------------

/// What the audit log says about an approval (the shared fields).
nlohmann::json audit_fields(const approval_ask& ask) {
  nlohmann::json j{{"approval", ask.key},
                   {"thread", ask.thread_id},
                   {"tenant", ask.tenant.empty() ? tenant_identity::default_tenant : ask.tenant},
                   {"turn", ask.turn_id()},
                   {"item", ask.item_id()},
                   {"type", hooks::to_string(ask.what)},
                   {"cwd", ask.cwd},
                   {"digest", ask.digest}};
  if (ask.is_client_request()) {
    // What was asked, never what was answered to a question (an answer may
    // be secret): the questions' ids, the tool, the permissions asked.
    j["type"] = to_string(ask.request);
    const auto& p = ask.request_params;
    if (ask.request == client_request::user_input) {
      auto ids = nlohmann::json::array();
      for (const auto& q : p.value("questions", nlohmann::json::array())) ids.push_back(q.value("id", ""));
      j["questions"] = std::move(ids);
    } else if (ask.request == client_request::dynamic_tool) {
      j["tool"] = p.value("tool", "");
      j["namespace"] = p.value("namespace", nlohmann::json());
    } else if (ask.request == client_request::mcp_approval) {
      // Which server's tool the model would call (the item names the call).
      j["server"] = p.value("serverName", "");
      j["message"] = p.value("message", "");
    } else if (ask.request == client_request::elicitation) {
      // Which server asked, and how; never what the user typed.
      j["server"] = p.value("serverName", "");
      j["mode"] = p.value("mode", "");
    } else {
      j["permissions"] = p.value("permissions", nlohmann::json::object());
    }
    return j;
  }
  if (ask.is_file_change()) {
    auto paths = nlohmann::json::array();
    for (const auto& c : ask.changes) paths.push_back(c.path);
    j["paths"] = std::move(paths);
  } else {
    j["command"] = protocol::or_null(ask.command.command);
  }
  return j;
}

/// A permission request's answer as the audit keeps it: what the client
/// answered, and what it grants (only what was asked: what the turn
/// applies), with its scope.
void audit_grant(nlohmann::json& fields, const approval_ask& ask, const nlohmann::json& answer) {
  nlohmann::json decoded;
  try {
    decoded = protocol::decode_permissions_answer(answer);
  } catch (const protocol::decode_error& e) {
    fields["granted"] = nlohmann::json::object();
    fields["detail"] = std::string{"a malformed answer grants nothing: "} + e.what();
    return;
  }
  auto granted = protocol::granted_within(ask.request_params.value("permissions", nlohmann::json::object()),
                                          decoded, ask.cwd);
  fields["answered"] = decoded["permissions"];
  fields["granted"] = granted["permissions"];
  fields["scope"] = granted["scope"];
  fields["grantedBeyondAsked"] = decoded["permissions"] != granted["permissions"];
}

void record_outcome(self_ptr self, const approval_outcome& out) {
  auto& st = self->state;
  // On the actor clock: a deterministic test moves it, and the latency with it.
  auto latency = self->clock().now() - st.asked_at;
  bool runs = out.how == approval_outcome::kind::decided && out.decision.allows_run();
  st.svc.telemetry->approvals.on_outcome(to_string(out.how), out.stage, runs, latency);
}

/// The audit line of an outcome. One that lets the action run is written
/// before the decision is stored or acted on: an accept the log could not
/// record runs nothing. Others are only sent.
void audit_then(self_ptr self, approval_outcome out, std::function<void(approval_outcome)> next) {
  auto& st = self->state;
  if (!st.svc.audit) return next(std::move(out));
  auto latency = self->clock().now() - st.asked_at;
  bool runs = out.how == approval_outcome::kind::decided && out.decision.allows_run();
  auto fields = audit_fields(st.ask);
  fields["stage"] = out.stage;
  if (!st.decided_by.empty()) fields["connection"] = st.decided_by;
  if (out.how == approval_outcome::kind::decided && !out.decision.subject.empty()) {
    // Who decided (issue 22); an operator acting on another tenant's thread
    // says so.
    fields["subject"] = out.decision.subject;
    if (out.decision.as_operator) {
      fields["operator"] = true;
      fields["operatorTenant"] = out.decision.tenant;
    }
  }
  fields["latency_ms"] = std::chrono::duration<double, std::milli>(latency).count();
  fields["runs"] = runs;
  if (out.how == approval_outcome::kind::decided)
    fields["decision"] = protocol::to_string(out.decision.value);
  // What a client granted is the audit's point; a tool's answer says only
  // whether it succeeded, and a question's answers stay out (they may be
  // secret).
  if (out.how == approval_outcome::kind::decided && st.ask.request == client_request::permissions)
    audit_grant(fields, st.ask, out.decision.answer);
  if (out.how == approval_outcome::kind::decided && st.ask.request == client_request::dynamic_tool)
    fields["success"] = out.decision.answer.value("success", false);
  if (!out.detail.empty()) fields["detail"] = out.detail;
  audit::record line{to_string(out.how), std::move(fields)};
  if (!runs) {
    caf::anon_send(st.svc.audit, atom::append::value, std::move(line));  // no reply awaited
    return next(std::move(out));
  }
  self->request(st.svc.audit, caf::infinite, atom::append::value, std::move(line))
      .then([out, next](atom::ok) mutable { next(std::move(out)); },
            [self, out, next](caf::error& err) mutable {
              PARLEY_WARN("approval key={} event=decision_not_audited error=\"{}\" not_run",
                          self->state.ask.key, message_of(err));
              out.how = approval_outcome::kind::client_error;
              out.detail = "the audit log could not record the decision: " + message_of(err);
              next(std::move(out));
            });
}

/// Codex's order: a file change's item starts before the thread waits on
/// it; a command's waiting status comes first, then its item.
void announce(self_ptr self) {
  auto& st = self->state;
  auto started = [&] {
    if (st.item_started) self->send(st.conversation, atom::event::value, st.item_started);
  };
  // A client tool's item, like a file change's, starts before the request.
  bool item_first = st.ask.is_file_change() || st.ask.is_client_request();
  if (item_first) started();
  if (st.plan.waits())
    self->send(st.conversation, atom::awaiting::value, ref_of(st.ask),
               caf::actor_cast<approval_actor>(self));
  if (!item_first) started();
}

}  // namespace

approval_ref ref_of(const approval_ask& ask) {
  return approval_ref{ask.key, ask.turn_id(), ask.item_id(), ask.request};
}

namespace {

void deliver(self_ptr self, approval_outcome out) {
  auto& st = self->state;
  PARLEY_DEBUG("approval key={} event=outcome how={} stage={} detail=\"{}\"", st.ask.key,
               to_string(out.how), out.stage, out.detail);
  record_outcome(self, out);
  st.promise.deliver(std::move(out));
  end_after_withdrawals(self, {});
}

/// The decision is stored before the turn acts on it. One that cannot be
/// stored lets nothing run (a restart would ask again).
void store_then_deliver(self_ptr self, approval_outcome out) {
  auto& st = self->state;
  if (!st.asked_durably) return deliver(self, std::move(out));
  auto r = st.record;
  r.at = action_record::phase::decided;
  store_outcome(r, out);
  r.decided_by = st.decided_by;
  self->request(st.conversation, caf::infinite, atom::append::value, std::move(r))
      .then([self, out](atom::ok) mutable { deliver(self, std::move(out)); },
            [self, out](caf::error& err) mutable {
              if (out.how == approval_outcome::kind::decided && out.decision.allows_run()) {
                PARLEY_WARN("approval key={} event=decision_not_stored error=\"{}\" not_run",
                            self->state.ask.key, message_of(err));
                out.how = approval_outcome::kind::client_error;
                out.detail = "the decision could not be stored: " + message_of(err);
              }
              deliver(self, std::move(out));
            });
}

}  // namespace

void finish(self_ptr self, approval_outcome out) {
  auto& st = self->state;
  if (st.resolved) return;  // exactly one outcome
  st.resolved = true;
  withdraw_open_prompts(self);
  if (st.plan.waits()) self->send(st.conversation, atom::settled::value, ref_of(st.ask));
  audit_then(self, std::move(out), [self](approval_outcome audited) {
    store_then_deliver(self, std::move(audited));
  });
}

void ask_durably(self_ptr self, std::function<void()> then) {
  auto& st = self->state;
  auto r = st.record;
  r.at = action_record::phase::asked;
  self->request(st.conversation, caf::infinite, atom::append::value, std::move(r))
      .then(
          [self, then](atom::ok) {
            if (self->state.resolved) return;
            self->state.asked_durably = true;
            then();
          },
          [self](caf::error& err) {
            if (self->state.resolved) return;
            // Not stored, not asked: fail closed.
            approval_outcome out;
            out.how = approval_outcome::kind::client_error;
            out.detail = "the approval could not be stored: " + message_of(err);
            out.stage = "client";
            finish(self, std::move(out));
          });
}

void decide(self_ptr self, protocol::approval_decision d, std::string stage, std::string detail) {
  approval_outcome out;
  out.how = approval_outcome::kind::decided;
  out.decision = std::move(d);
  out.stage = std::move(stage);
  out.detail = std::move(detail);
  finish(self, std::move(out));
}

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

/// Names the stage whose answer may come later (as hook_reply with the
/// returned token); any other token is a late or foreign answer.
uint64_t reserve_token(self_ptr self, std::string stage) {
  static std::atomic<uint64_t> tokens{0};
  auto& st = self->state;
  st.waiting_token = ++tokens;
  st.waiting_stage = std::move(stage);
  return st.waiting_token;
}

namespace {

void start(self_ptr self) {
  auto& st = self->state;
  st.started = true;
  st.asked_at = self->clock().now();
  st.svc.telemetry->approvals.on_requested();
  if (st.svc.audit)
    caf::anon_send(st.svc.audit, atom::append::value,
                   audit::record{"requested", audit_fields(st.ask)});
  announce(self);
  // Asked before a restart: every stage before the client's had passed.
  // A request that is no approval has no rules, grants or hooks: only a
  // client can answer it.
  if (st.restored || st.ask.is_client_request()) return ask_clients(self);
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
  if (is_errc(em.reason, errc::unloading) && s.asked_durably && !s.resolved) {
    // Parked (its thread unloads while it waits): undecided, its ask stays
    // pending in the store; any prompt still open is voided, so a client
    // answers it again once the thread is loaded.
    PARLEY_DEBUG("approval key={} event=parked", s.ask.key);
    s.resolved = true;
    withdraw_open_prompts(self);
    return end_after_withdrawals(self, em.reason);
  }
  PARLEY_DEBUG("approval key={} event=cancelled reason={}", s.ask.key, caf::to_string(em.reason));
  if (s.started && !s.resolved) {
    approval_outcome out;
    out.how = approval_outcome::kind::cancelled;
    out.detail = "turn interrupted";
    out.stage = "interrupt";
    return finish(self, std::move(out));  // quits once the turn has the outcome
  }
  if (!s.resolved) self->quit();  // never started: nobody waits for it
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

/// A stage's deadline: the client stage's fails closed as timed out; a
/// hook's denies.
void on_deadline(self_ptr self, uint64_t token) {
  auto& s = self->state;
  if (!s.started) {
    // Handed out (an MCP server's elicitation) and never started: its
    // asker went away before it could. Nobody waits for it.
    if (token == 0) {
      PARLEY_INFO("approval key={} event=abandoned (never started)", s.ask.key);
      self->quit();
    }
    return;
  }
  if (s.resolved || token != s.waiting_token) return;  // answered in time
  s.waiting_token = 0;
  if (s.waiting_stage == "client") return client_deadline(self);
  PARLEY_INFO("approval key={} event=hook_timeout hook={}", s.ask.key, s.waiting_stage);
  decide(self, protocol::approval_decision::decline(), s.waiting_stage, "approval timeout");
}

}  // namespace

}  // namespace approval_detail

approval_actor::behavior_type approval(approval_actor::stateful_pointer<approval_state> self,
                                       conversation_actor conversation, approval_ask ask,
                                       approval_plan plan, runtime_services svc,
                                       notification_ptr item_started, action_record record,
                                       bool restored) {
  using namespace approval_detail;
  install_default_handlers(self, "approval");
  auto& st = self->state;
  st.record = std::move(record);
  st.restored = restored;
  st.asked_durably = restored;  // its ask is in the store already
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
      [self](atom::ask, const client_actor& client) { ask_also(self, client); },
      [self](atom::hook_reply, uint64_t token, hooks::verdict& v) {
        on_hook_reply(self, token, v);
      },
      [self](atom::deadline, uint64_t token) { on_deadline(self, token); },
  };
}

}  // namespace parley
