#include "actors/turn.hpp"

#include <caf/sec.hpp>

#include "actors/approval.hpp"
#include "actors/exec.hpp"
#include "actors/handlers.hpp"
#include "protocol/ids.hpp"

namespace parley {

namespace {

using self_ptr = turn_actor::stateful_pointer<turn_state>;
using protocol::item_status;

constexpr auto model_timeout = std::chrono::minutes(5);

template <class T>
void emit(self_ptr self, T&& n) {
  self->send(self->state.conversation, atom::event::value,
             make_event(self->state.svc, std::forward<T>(n)));
}

void item_started(self_ptr self, protocol::thread_item item, int64_t at_ms) {
  auto& s = self->state.settings;
  emit(self, protocol::item_started{s.thread_id, s.turn_id, std::move(item), at_ms});
}

void item_completed(self_ptr self, protocol::thread_item item) {
  auto& s = self->state.settings;
  emit(self,
       protocol::item_completed{s.thread_id, s.turn_id, std::move(item), protocol::unix_ms()});
}

void finish(self_ptr self, turn_result result) {
  if (self->state.finished) return;
  self->state.finished = true;
  self->send(self->state.conversation, atom::turn_done::value, std::move(result));
}

void next_step(self_ptr self);

/// Ends the current command item with `status` and moves on.
void complete_command(self_ptr self, item_status status, std::string result) {
  auto item = std::move(*self->state.command);
  self->state.command.reset();
  item.status = status;
  item_completed(self, std::move(item));
  self->state.context.step_results.push_back(std::move(result));
}

void start_exec(self_ptr self) {
  auto& st = self->state;
  st.output.emplace(st.svc.config->output_cap_bytes);
  auto runner = self->spawn<caf::linked>(exec, caf::actor_cast<turn_actor>(self), st.raw_command,
                                         st.settings.cwd, st.svc.reactor);
  st.exec_addr = runner.address();
}

void on_outcome(self_ptr self, uint64_t key, approval_outcome out) {
  auto& st = self->state;
  if (!st.pending_ask || *st.pending_ask != key) {
    PARLEY_DEBUG("turn {} event=stale_outcome key={} ignored", st.settings.turn_id, key);
    return;  // exactly one decision: this ask was already resolved
  }
  st.pending_ask.reset();
  st.approval_addr = caf::actor_addr{};
  if (!st.command) return;  // already resolved by an interrupt
  using kind = approval_outcome::kind;
  using decision = protocol::approval_decision::kind;
  switch (out.how) {
    case kind::decided:
      if (out.decision.allows_run()) {
        if (out.decision.value == decision::accept_for_session) {
          st.settings.grants.commands.insert(st.raw_command);
          self->send(st.conversation, atom::grant::value, st.raw_command);
        } else if (out.decision.value == decision::accept_with_execpolicy_amendment
                   && !out.decision.execpolicy_amendment.empty()) {
          st.settings.grants.prefixes.push_back(out.decision.execpolicy_amendment);
          self->send(st.conversation, atom::grant::value, out.decision.execpolicy_amendment);
        }
        start_exec(self);
        return;
      }
      complete_command(self, item_status::declined, "rejected by user");
      if (out.decision.value == decision::cancel) {
        finish(self, turn_result{protocol::turn_status::interrupted, std::nullopt});
        self->quit();
        return;
      }
      break;
    case kind::client_error:
    case kind::malformed:
      complete_command(self, item_status::failed, "approval request failed: " + out.detail);
      break;
    case kind::timed_out:
      complete_command(self, item_status::declined, "approval timed out");
      break;
    case kind::transport_closed:
    case kind::cancelled:
      complete_command(self, item_status::declined, "approval cancelled");
      finish(self, turn_result{protocol::turn_status::interrupted, std::nullopt});
      self->quit();
      return;
  }
  next_step(self);
}

void ask_approval(self_ptr self) {
  auto& st = self->state;
  const auto& item = *st.command;
  approval_ask ask;
  ask.key = next_ask_key();
  ask.thread_id = st.settings.thread_id;
  ask.command.thread_id = st.settings.thread_id;
  ask.command.turn_id = st.settings.turn_id;
  ask.command.item_id = item.id;
  ask.command.started_at_ms = st.command_started_ms;
  ask.command.command = item.command;
  ask.command.cwd = item.cwd;
  ask.command.command_actions = item.command_actions;
  if (auto words = split_simple_command(st.raw_command))
    ask.command.proposed_execpolicy_amendment = *words;
  st.pending_ask = ask.key;
  auto timeout = st.svc.config->approval_timeout;
  auto pending = self->spawn<caf::linked>(approval, st.conversation, ask, timeout, st.svc.audit);
  st.approval_addr = pending.address();
  // No timeout of its own: the approval owns the deadline, and if it dies
  // before answering, its link tells this turn at once (see the exit handler).
  self->request(pending, caf::infinite, atom::decide::value)
      .then(
          [self, key = ask.key](approval_outcome& out) { on_outcome(self, key, std::move(out)); },
          [self, key = ask.key](caf::error& err) { on_outcome(self, key, outcome_of_error(err)); });
}

void run_command(self_ptr self, const std::string& raw) {
  auto& st = self->state;
  protocol::command_execution_item item;
  item.id = protocol::new_call_id();
  item.command = display_command(raw);
  item.cwd = st.settings.cwd;
  item.command_actions = describe_command(raw);
  st.raw_command = raw;
  st.command_started_ms = protocol::unix_ms();
  auto verdict = evaluate(st.settings.policy, raw, st.settings.grants);
  if (verdict == policy_verdict::ask) {
    // The status change precedes the item, as Codex orders it.
    self->send(st.conversation, atom::awaiting::value, item.id);
  }
  item_started(self, item, st.command_started_ms);
  st.command = std::move(item);
  switch (verdict) {
    case policy_verdict::run:
      start_exec(self);
      return;
    case policy_verdict::decline:
      complete_command(self, item_status::declined, "declined by policy");
      next_step(self);
      return;
    case policy_verdict::ask:
      ask_approval(self);
      return;
  }
}

void say(self_ptr self, const std::vector<std::string>& deltas) {
  auto& s = self->state.settings;
  protocol::agent_message_item item;
  item.id = "msg_" + protocol::new_call_id().substr(5);
  item_started(self, item, protocol::unix_ms());
  for (const auto& d : deltas) {
    emit(self, protocol::agent_message_delta{s.thread_id, s.turn_id, item.id, d});
    item.text += d;
  }
  item.phase = "final_answer";
  item_completed(self, std::move(item));
  self->state.context.step_results.push_back("said");
}

void next_step(self_ptr self) {
  auto& st = self->state;
  self->request(st.svc.model, model_timeout, atom::step::value, st.context)
      .then(
          [self](model_step& step) {
            switch (step.what) {
              case model_step::kind::done:
                finish(self, turn_result{protocol::turn_status::completed, std::nullopt});
                self->quit();
                return;
              case model_step::kind::say:
                say(self, step.deltas);
                next_step(self);
                return;
              case model_step::kind::run:
                run_command(self, step.command);
                return;
            }
          },
          [self](caf::error& err) {
            protocol::turn_error e;
            e.message = "model failed: " + message_of(err);
            e.codex_error_info = "other";
            auto& s = self->state.settings;
            emit(self, protocol::error_notification{s.thread_id, s.turn_id, e, false});
            finish(self, turn_result{protocol::turn_status::failed, e});
            self->quit();
          });
}

/// turn/interrupt or shutdown: resolve what is pending, then end.
void interrupt(self_ptr self, const caf::error& reason) {
  auto& st = self->state;
  if (st.pending_ask) {
    // The client's prompt is closed before the item ends declined.
    self->send(st.conversation, atom::withdraw::value, *st.pending_ask);
    st.pending_ask.reset();
    complete_command(self, item_status::declined, "interrupted");
  } else if (st.command) {
    // A running command: its exec dies with this turn (link) and kills the
    // process group; the item ends failed with what it printed so far.
    st.command->aggregated_output = st.output ? st.output->aggregated() : std::string{};
    st.command->duration_ms = protocol::unix_ms() - st.command_started_ms;
    complete_command(self, item_status::failed, "interrupted");
  }
  finish(self, turn_result{protocol::turn_status::interrupted, std::nullopt});
  self->quit(reason);
}

}  // namespace

turn_actor::behavior_type turn(turn_actor::stateful_pointer<turn_state> self,
                               conversation_actor conversation, runtime_services svc,
                               turn_settings settings) {
  install_default_handlers(self, "turn");
  self->state.conversation = std::move(conversation);
  self->state.svc = std::move(svc);
  self->state.context.user_text = settings.user_text;
  self->state.settings = std::move(settings);
  self->set_exit_handler([self](caf::exit_msg& em) {
    if (!em.reason) return;  // a linked approval or exec finished normally
    auto& st = self->state;
    if (em.source == st.exec_addr && st.command && !st.pending_ask) {
      // The command runner died without reporting an exit.
      st.exec_addr = caf::actor_addr{};
      complete_command(self, item_status::failed, "command runner failed");
      next_step(self);
      return;
    }
    if (em.source == st.approval_addr && st.pending_ask) {
      // The approval crashed before deciding: fail closed, at once.
      approval_outcome out;
      out.how = approval_outcome::kind::client_error;
      out.detail = "approval failed: " + caf::to_string(em.reason);
      on_outcome(self, *st.pending_ask, std::move(out));
      return;
    }
    interrupt(self, em.reason);
  });
  next_step(self);
  return {
      [self](atom::output, const std::string& chunk) {
        auto& st = self->state;
        if (!st.command || !st.output) return;
        auto delta = st.output->add(chunk);
        if (delta.empty()) return;
        auto& s = st.settings;
        emit(self, protocol::command_output_delta{s.thread_id, s.turn_id, st.command->id,
                                                  std::move(delta)});
      },
      [self](atom::exited, const exit_info& info) {
        auto& st = self->state;
        if (!st.command || !st.output) return;
        st.exec_addr = caf::actor_addr{};
        if (auto tail = st.output->finish(); !tail.empty()) {
          auto& s = st.settings;
          emit(self, protocol::command_output_delta{s.thread_id, s.turn_id, st.command->id,
                                                    std::move(tail)});
        }
        st.command->aggregated_output = st.output->aggregated();
        st.command->exit_code = info.exit_code;
        st.command->duration_ms = info.duration_ms;
        if (info.pid > 0) st.command->process_id = std::to_string(info.pid);
        st.output.reset();
        complete_command(self, info.exit_code == 0 ? item_status::completed : item_status::failed,
                         "exit code " + std::to_string(info.exit_code));
        next_step(self);
      },
  };
}

}  // namespace parley
