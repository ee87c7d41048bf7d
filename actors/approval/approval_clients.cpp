// The client stage of an approval: every client subscribed to the thread is
// asked (the conversation says who, in order with the thread's events, and
// sends later subscribers too); the first answer wins and is applied once.
// Every other copy is voided (serverRequest/resolved on its connection); an
// answer that comes after the decision is refused and counted. A client that
// goes away withdraws nothing while another can still answer; when none can,
// the approval fails closed. One deadline covers the whole stage.
//
// A late answer can cross its withdrawal: the client answered before its
// connection read the withdrawal, so the connection still hands the answer
// over. Each withdrawal is therefore acknowledged, and the approval outlives
// its outcome until every acknowledgement is in: the answer, sent before
// the acknowledgement by the same connection, arrives first and is refused
// here (logged, counted), never dropped on a dead actor unheard.

#include <algorithm>
#include <caf/sec.hpp>
#include <chrono>

#include "actors/approval/approval_detail.hpp"
#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"
#include "protocol/ids.hpp"

namespace parley::approval_detail {

namespace {

/// How the audit log names the connection that decided.
std::string name_of(const client_actor& client) {
  return "connection#" + std::to_string(client.id());
}

client_prompt* prompt_of(approval_state& st, const client_actor& client) {
  for (auto& p : st.prompts)
    if (p.client == client) return &p;
  return nullptr;
}

bool any_prompt_open(const approval_state& st) {
  for (const auto& p : st.prompts)
    if (p.open) return true;
  return false;
}

/// What a client answered itself (a decision, an error reply, a malformed
/// answer), as opposed to what its connection reports (withdrawn, gone).
bool answered_by_client(const caf::expected<protocol::approval_decision>& answer) {
  return answer || is_errc(answer.error(), errc::client_error)
         || is_errc(answer.error(), errc::malformed_reply);
}

void on_answer(self_ptr self, const client_actor& client,
               caf::expected<protocol::approval_decision> answer) {
  auto& st = self->state;
  if (auto* p = prompt_of(st, client)) p->open = false;  // its session closed the prompt
  if (st.resolved) {
    if (answered_by_client(answer)) {
      // Decided already (another client's answer, the deadline, an
      // interrupt): refused.
      st.svc.telemetry->approvals.on_refused_reply();
      PARLEY_INFO("approval key={} event=late_answer from={} refused", st.ask.key, name_of(client));
    }
    return;
  }
  if (answer) {
    PARLEY_DEBUG("approval key={} event=decided decision={} by={}", st.ask.key,
                 protocol::to_string(answer->value), name_of(client));
    st.decided_by = name_of(client);
    return decide(self, std::move(*answer), "client", {});
  }
  auto out = outcome_of_error(answer.error());
  if (out.how == approval_outcome::kind::transport_closed) {
    // A client leaving is not an answer: another client can still answer,
    // or one that comes (a resume asks it), until the deadline. (A stdio
    // client closing its input stops the server, which cancels.)
    PARLEY_INFO("approval key={} event=client_gone from={} others_asked={}", st.ask.key,
                name_of(client), any_prompt_open(st));
    return;
  }
  PARLEY_INFO("approval key={} event=failed outcome={} detail={}", st.ask.key, to_string(out.how),
              out.detail);
  out.stage = out.how == approval_outcome::kind::cancelled ? "interrupt" : "client";
  if (out.how != approval_outcome::kind::transport_closed) st.decided_by = name_of(client);
  finish(self, std::move(out));
}

void ask_one(self_ptr self, const client_actor& client) {
  auto& st = self->state;
  if (prompt_of(st, client)) return;  // asked already
  st.prompts.push_back({client, true});
  PARLEY_DEBUG("approval key={} event=ask client={}", st.ask.key, name_of(client));
  // No timeout of its own: the stage's deadline covers every client, and a
  // client that goes away answers with an error (its session fails its asks).
  self->request(client, caf::infinite, atom::ask::value, st.ask)
      .then([self, client](protocol::approval_decision& d) { on_answer(self, client, d); },
            [self, client](caf::error& err) { on_answer(self, client, err); });
}

}  // namespace

namespace {

/// Asks every client the conversation names, with `wait` until the stage's
/// deadline.
void open_client_stage(self_ptr self, caf::timespan wait) {
  auto& st = self->state;
  auto token = reserve_token(self, "client");
  self->delayed_send(self, wait, atom::deadline::value, token);
  // The conversation answers once every event before this ask has left, so
  // each client sees the item before it is asked about it.
  self->request(st.conversation, caf::infinite, atom::ask::value, ref_of(st.ask))
      .then(
          [self](client_list& clients) {
            auto& s = self->state;
            if (s.resolved) return;
            for (auto& c : clients) ask_one(self, c);
            // With no client subscribed it waits for one to come (one that
            // resumes the thread is asked) or for its deadline, stored or not.
            if (s.prompts.empty() && !s.asked_durably) {
              approval_outcome out;
              out.how = approval_outcome::kind::transport_closed;
              out.detail = "no client can decide";
              out.stage = "client";
              finish(self, std::move(out));
            }
          },
          [self](caf::error& err) {
            if (self->state.resolved) return;
            if (is_errc(err, errc::overloaded)) {
              // A pending-approvals limit: asked of nobody, declined (fails
              // closed), the limit named in the item and the log.
              PARLEY_INFO("approval key={} event=refused_by_limit detail=\"{}\"",
                          self->state.ask.key, message_of(err));
              return decide(self, protocol::approval_decision::decline(), "limit",
                            message_of(err));
            }
            auto out = outcome_of_error(err);
            out.stage = out.how == approval_outcome::kind::cancelled ? "interrupt" : "client";
            finish(self, std::move(out));
          });
}

}  // namespace

void ask_clients(self_ptr self) {
  auto& st = self->state;
  if (st.allowed_by && !st.must_ask) {
    decide(self, protocol::approval_decision::accept(), *st.allowed_by, st.allow_reason);
    return;
  }
  if (st.restored) {
    // The deadline kept running while the server was down.
    auto left = std::chrono::milliseconds(st.record.deadline_ms - protocol::unix_ms());
    if (left.count() <= 0) return client_deadline(self);
    return open_client_stage(self, left);
  }
  auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      st.svc.config->approval_timeout);
  // An MCP server's elicitation is not stored: its question lives in the
  // server's process, which a restart of parley ends (the server asks
  // again, or not). Asked at once, under the same deadline.
  if (st.ask.request == client_request::elicitation) return open_client_stage(self, timeout);
  st.record.deadline_ms = protocol::unix_ms() + timeout.count();
  // Stored before any client sees it, with its deadline as a time of day,
  // so a restart asks it again with what is left; the live deadline is the
  // same one (the time the store took counts). So is a question or a client
  // tool's call: the turn's record of it names it (action_record::request).
  ask_durably(self, [self] {
    auto left = self->state.record.deadline_ms - protocol::unix_ms();
    open_client_stage(self, std::chrono::milliseconds(std::max<int64_t>(left, 0)));
  });
}

void ask_also(self_ptr self, const client_actor& client) {
  auto& st = self->state;
  if (st.resolved || st.waiting_stage != "client" || st.waiting_token == 0) return;
  PARLEY_DEBUG("approval key={} event=ask_also client={}", st.ask.key, name_of(client));
  // Through the conversation, as the first ask: it answers once every event
  // queued before this request has left, the item's start among them (this
  // approval sent it before), so the client that joined sees the item
  // before it is asked about it. Asked directly, the ask could overtake an
  // item/started still in the conversation's mailbox or outbox: a command's
  // start follows its waiting status, and a resume's offer can come between.
  self->request(st.conversation, caf::infinite, atom::ask::value, ref_of(st.ask))
      .then(
          [self, client](client_list& clients) {
            auto& s = self->state;
            if (s.resolved || s.waiting_stage != "client" || s.waiting_token == 0) return;
            // Still a subscriber (one that left meanwhile is not asked).
            if (std::find(clients.begin(), clients.end(), client) != clients.end())
              ask_one(self, client);
          },
          [self, client](caf::error& err) {
            // The turn is over (its outcome follows) or the approval was
            // refused at its first ask: nothing more to ask.
            PARLEY_DEBUG("approval key={} event=ask_also_dropped client={} reason=\"{}\"",
                         self->state.ask.key, name_of(client), message_of(err));
          });
}

void client_deadline(self_ptr self) {
  auto& st = self->state;
  PARLEY_INFO("approval key={} event=timeout", st.ask.key);
  approval_outcome out;
  out.how = approval_outcome::kind::timed_out;
  out.detail = "approval timed out";
  out.stage = "deadline";
  finish(self, std::move(out));
}

namespace {

/// How long an approval that is over waits for a withdrawal's
/// acknowledgement. A connection acknowledges as soon as it reads the
/// withdrawal; only one that stopped reading its mailbox takes this long
/// (and whatever it answers after that is lost, as said in the log).
constexpr auto withdrawal_ack_timeout = std::chrono::seconds(60);

void quit_if_acknowledged(self_ptr self) {
  auto& st = self->state;
  if (st.ending && st.withdrawals_unacknowledged == 0) self->quit(st.exit_reason);
}

void on_withdrawal_acknowledged(self_ptr self) {
  --self->state.withdrawals_unacknowledged;
  quit_if_acknowledged(self);
}

}  // namespace

void withdraw_open_prompts(self_ptr self) {
  auto& st = self->state;
  for (auto& p : st.prompts) {
    if (!p.open) continue;
    p.open = false;
    ++st.withdrawals_unacknowledged;
    self->request(p.client, withdrawal_ack_timeout, atom::withdraw::value, st.ask.key)
        .then([self] { on_withdrawal_acknowledged(self); },
              [self, client = p.client](caf::error& err) {
                // A client gone acknowledges nothing, and answers nothing more.
                if (err == caf::sec::request_timeout)
                  PARLEY_WARN("approval key={} event=withdrawal_unacknowledged client={} "
                              "(a later answer from it is dropped)",
                              self->state.ask.key, name_of(client));
                on_withdrawal_acknowledged(self);
              });
  }
}

void end_after_withdrawals(self_ptr self, caf::error reason) {
  auto& st = self->state;
  st.ending = true;
  st.exit_reason = std::move(reason);
  st.live = counted{};  // over: it no longer counts as a live approval
  quit_if_acknowledged(self);
}

}  // namespace parley::approval_detail
