#include "actors/approval.hpp"

#include <caf/sec.hpp>

#include "actors/handlers.hpp"

namespace parley {

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

/// What the audit log says about an approval (the shared fields).
nlohmann::json audit_fields(const approval_ask& ask) {
  return nlohmann::json{{"approval", ask.key},
                        {"thread", ask.thread_id},
                        {"turn", ask.command.turn_id},
                        {"item", ask.command.item_id},
                        {"command", protocol::or_null(ask.command.command)},
                        {"cwd", protocol::or_null(ask.command.cwd)}};
}

void audit_outcome(approval_actor::stateful_pointer<approval_state> self, const audit_actor& audit,
                   const approval_ask& ask, const approval_outcome& out, const char* stage) {
  if (!audit) return;
  auto fields = audit_fields(ask);
  fields["stage"] = stage;
  fields["latency_ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - self->state.asked_at)
          .count();
  if (out.how == approval_outcome::kind::decided) {
    fields["decision"] = protocol::to_string(out.decision.value);
    fields["runs"] = out.decision.allows_run();
  } else {
    fields["runs"] = false;
    fields["detail"] = out.detail;
  }
  self->send(audit, atom::append::value, audit::record{to_string(out.how), std::move(fields)});
}

}  // namespace

approval_actor::behavior_type approval(approval_actor::stateful_pointer<approval_state> self,
                                       conversation_actor conversation, approval_ask ask,
                                       std::chrono::milliseconds timeout, audit_actor audit) {
  install_default_handlers(self, "approval");
  // Interrupting the turn ends this actor through its link: the turn itself
  // resolves the ask (withdraw + item declined) so the order of events holds.
  self->set_exit_handler([self, ask, audit](caf::exit_msg& em) {
    if (!em.reason) return;  // the turn finished normally
    PARLEY_DEBUG("approval key={} event=cancelled reason={}", ask.key, caf::to_string(em.reason));
    if (!self->state.resolved) {
      self->state.resolved = true;
      approval_outcome out;
      out.how = approval_outcome::kind::cancelled;
      out.detail = "turn interrupted";
      audit_outcome(self, audit, ask, out, "interrupt");
    }
    self->quit(em.reason);
  });
  return {
      [self, conversation, ask, timeout, audit](atom::decide) -> caf::result<approval_outcome> {
        auto rp = self->make_response_promise<approval_outcome>();
        if (self->state.resolved) {
          rp.deliver(make_error(errc::invalid_request, "approval already decided"));
          return rp;
        }
        self->state.asked_at = std::chrono::steady_clock::now();
        if (audit)
          self->send(audit, atom::append::value, audit::record{"requested", audit_fields(ask)});
        auto key = ask.key;
        auto finish = [self, rp, audit, ask](approval_outcome out) mutable {
          if (self->state.resolved) return;  // exactly one outcome
          self->state.resolved = true;
          // Which stage ended it: the client's answer (or its failure), the
          // deadline, or the turn being interrupted (its ask was withdrawn).
          const char* stage = out.how == approval_outcome::kind::timed_out   ? "deadline"
                              : out.how == approval_outcome::kind::cancelled ? "interrupt"
                                                                             : "client";
          audit_outcome(self, audit, ask, out, stage);
          rp.deliver(std::move(out));
          self->quit();
        };
        self->request(conversation, timeout, atom::ask::value, ask)
            .then(
                [finish, key](protocol::approval_decision& d) mutable {
                  PARLEY_DEBUG("approval key={} event=decided decision={}", key,
                               protocol::to_string(d.value));
                  approval_outcome out;
                  out.how = approval_outcome::kind::decided;
                  out.decision = std::move(d);
                  finish(std::move(out));
                },
                [self, finish, conversation, key](caf::error& err) mutable {
                  auto out = outcome_of_error(err);
                  if (out.how == approval_outcome::kind::timed_out) {
                    // Fail closed, and let the client close its prompt.
                    self->send(conversation, atom::withdraw::value, key);
                    PARLEY_INFO("approval key={} event=timeout", key);
                  } else {
                    PARLEY_INFO("approval key={} event=failed outcome={} detail={}", key,
                                to_string(out.how), out.detail);
                  }
                  finish(std::move(out));
                });
        return rp;
      },
  };
}

}  // namespace parley
