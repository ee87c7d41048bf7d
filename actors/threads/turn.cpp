#include "actors/threads/turn.hpp"

#include <caf/sec.hpp>
#include <functional>

#include "actors/approval/action_digest.hpp"
#include "actors/approval/approval.hpp"
#include "actors/threads/exec.hpp"
#include "actors/core/handlers.hpp"
#include "protocol/ids.hpp"

namespace parley {

namespace {

using self_ptr = process_sink_actor::stateful_pointer<turn_state>;
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

/// A short message from the runtime itself (e.g. why a patch did not apply).
void say(self_ptr self, const std::vector<std::string>& deltas, const char* phase) {
  auto& s = self->state.settings;
  protocol::agent_message_item item;
  item.id = "msg_" + protocol::new_call_id().substr(5);
  item_started(self, item, protocol::unix_ms());
  for (const auto& d : deltas) {
    emit(self, protocol::agent_message_delta{s.thread_id, s.turn_id, item.id, d});
    item.text += d;
  }
  item.phase = phase;
  item_completed(self, std::move(item));
}

void finish(self_ptr self, turn_result result) {
  if (self->state.finished) return;
  self->state.finished = true;
  self->send(self->state.conversation, atom::turn_done::value, std::move(result));
}

void end_turn(self_ptr self, protocol::turn_status status) {
  finish(self, turn_result{status, std::nullopt});
  self->quit();
}

void next_step(self_ptr self);

/// Ends the item in progress (command or file change) with `status`; the
/// model sees `result`.
void complete_current(self_ptr self, item_status status, std::string result) {
  auto& st = self->state;
  if (st.command) {
    auto item = std::move(st.command->item);
    st.command.reset();
    item.status = status;
    item_completed(self, std::move(item));
  } else if (st.patch) {
    auto item = std::move(st.patch->item);
    st.patch.reset();
    item.status = status;
    item_completed(self, std::move(item));
  }
  st.context.step_results.push_back(std::move(result));
}

// -- commands ----------------------------------------------------------------

void start_exec(self_ptr self) {
  auto& st = self->state;
  auto& cmd = *st.command;
  cmd.output.emplace(st.svc.config->output_cap_bytes);
  auto runner = self->spawn<caf::linked>(exec, caf::actor_cast<process_sink_actor>(self), cmd.raw,
                                         st.settings.cwd, st.svc.reactor, st.svc.telemetry);
  cmd.exec_addr = runner.address();
}

/// The outcome table of protocol.md §4 for anything that waited on an
/// approval. Only an explicit accept calls `accepted`; everything else ends
/// the item (an error reply ends a command `failed`, a file change
/// `declined`) and the turn goes on, or ends interrupted.
void settle(self_ptr self, const approval_outcome& out, item_status on_error,
            const std::function<void()>& accepted) {
  using kind = approval_outcome::kind;
  switch (out.how) {
    case kind::decided:
      if (out.decision.allows_run()) return accepted();
      complete_current(self, item_status::declined,
                       out.stage == "client" ? "rejected by user" : "declined: " + out.detail);
      if (out.decision.value == protocol::approval_decision::kind::cancel)
        return end_turn(self, protocol::turn_status::interrupted);
      break;
    case kind::client_error:
    case kind::malformed:
      complete_current(self, on_error, "approval request failed: " + out.detail);
      break;
    case kind::timed_out:
      complete_current(self, item_status::declined, "approval timed out");
      break;
    case kind::transport_closed:
    case kind::cancelled:
      complete_current(self, item_status::declined, "approval cancelled");
      return end_turn(self, protocol::turn_status::interrupted);
  }
  next_step(self);
}

/// An accepted command: remember what the decision grants, then run it.
void run_accepted(self_ptr self, const protocol::approval_decision& d) {
  auto& st = self->state;
  using decision = protocol::approval_decision::kind;
  const auto& raw = st.command->raw;
  if (d.value == decision::accept_for_session) {
    st.settings.grants.commands.insert(raw);
    self->send(st.conversation, atom::grant::value, raw);
  } else if (d.value == decision::accept_with_execpolicy_amendment
             && !d.execpolicy_amendment.empty()) {
    st.settings.grants.prefixes.push_back(d.execpolicy_amendment);
    self->send(st.conversation, atom::grant::value, d.execpolicy_amendment);
    // ... and for every later session: the rule goes to the rules file.
    if (st.svc.rules_keeper)
      self->send(st.svc.rules_keeper, atom::amend::value, d.execpolicy_amendment);
  }
  start_exec(self);
}

// -- file changes ------------------------------------------------------------

/// Applies the approved changes, all files or none, then reports the turn's diff.
void apply_changes(self_ptr self) {
  auto& st = self->state;
  auto planned = std::move(st.patch->planned);
  if (auto applied = patch::apply(planned); !applied) {
    auto why = applied.error().message;
    PARLEY_INFO("turn {} event=patch_failed item={} reason=\"{}\"", st.settings.turn_id,
                st.patch->item.id, why);
    complete_current(self, item_status::failed, "patch failed: " + why);
    say(self, {"apply_patch failed: " + why}, "commentary");
    return next_step(self);
  }
  st.diff.record(planned);
  complete_current(self, item_status::completed, "patch applied");
  auto& s = st.settings;
  emit(self, protocol::turn_diff_updated{s.thread_id, s.turn_id, st.diff.render()});
  next_step(self);
}

/// An accepted file change: remember the files if accepted for the
/// session, then apply it.
void apply_accepted(self_ptr self, const protocol::approval_decision& d) {
  auto& st = self->state;
  if (d.value == protocol::approval_decision::kind::accept_for_session) {
    path_grant g;
    for (const auto& c : st.patch->planned) {
      g.paths.push_back(c.resolved_path);
      if (!c.resolved_move_to.empty()) g.paths.push_back(c.resolved_move_to);
    }
    st.settings.grants.paths.insert(g.paths.begin(), g.paths.end());
    self->send(st.conversation, atom::grant::value, std::move(g));
  }
  apply_changes(self);
}

std::vector<protocol::file_update_change> describe_changes(
    const std::vector<patch::file_change>& planned) {
  std::vector<protocol::file_update_change> out;
  for (const auto& c : planned) {
    protocol::file_update_change u;
    u.path = c.resolved_path;
    switch (c.kind) {
      case patch::change_kind::add:
        u.type = protocol::file_update_change::kind::add;
        u.diff = c.new_content;
        break;
      case patch::change_kind::remove:
        u.type = protocol::file_update_change::kind::remove;
        u.diff = c.old_content;
        break;
      case patch::change_kind::update:
        u.type = protocol::file_update_change::kind::update;
        if (!c.resolved_move_to.empty()) u.move_path = c.resolved_move_to;
        u.diff = c.unified_diff;
        break;
    }
    out.push_back(std::move(u));
  }
  return out;
}

// -- approvals ---------------------------------------------------------------

void on_outcome(self_ptr self, uint64_t key, approval_outcome out) {
  auto& st = self->state;
  if (!st.pending_ask || *st.pending_ask != key) {
    PARLEY_DEBUG("turn {} event=stale_outcome key={} ignored", st.settings.turn_id, key);
    return;  // exactly one decision: this ask was already resolved
  }
  st.pending_ask.reset();
  st.approval_addr = caf::actor_addr{};
  if (!st.command && !st.patch) return;  // already resolved by an interrupt
  // Decided: the thread no longer waits on it (a client's answer already
  // cleared this when it settled; a rule's or a hook's did not).
  self->send(st.conversation, atom::awaiting::value,
             st.command ? st.command->item.id : st.patch->item.id, false);
  if (out.how == approval_outcome::kind::decided && out.digest != st.pending_digest) {
    // A decision binds to the action that was shown, nothing else.
    PARLEY_WARN("turn {} event=decision_refused key={} reason=digest_mismatch", st.settings.turn_id,
                key);
    out.decision = protocol::approval_decision::decline();
    out.stage = "binding";
    out.detail = "the decision was for another action";
  }
  if (st.command)
    settle(self, out, item_status::failed, [&] { run_accepted(self, out.decision); });
  else
    settle(self, out, item_status::declined, [&] { apply_accepted(self, out.decision); });
}

void ask_approval(self_ptr self, approval_ask ask) {
  auto& st = self->state;
  ask.key = st.svc.telemetry->next_ask_key();
  st.pending_ask = ask.key;
  st.pending_digest = ask.digest;
  auto key = ask.key;
  auto pending = self->spawn<caf::linked>(approval, st.conversation, std::move(ask), st.svc,
                                          st.settings.grants);
  st.approval_addr = pending.address();
  // No timeout of its own: the approval owns the deadline, and if it dies
  // before answering, its link tells this turn at once (see the exit handler).
  self->request(pending, caf::infinite, atom::decide::value)
      .then([self, key](approval_outcome& out) { on_outcome(self, key, std::move(out)); },
            [self, key](caf::error& err) { on_outcome(self, key, outcome_of_error(err)); });
}

// -- steps -------------------------------------------------------------------

void run_command(self_ptr self, const std::string& raw) {
  auto& st = self->state;
  command_step cmd;
  cmd.item.id = protocol::new_call_id();
  cmd.item.command = display_command(raw);
  cmd.item.cwd = st.settings.cwd;
  cmd.item.command_actions = describe_command(raw);
  cmd.raw = raw;
  cmd.started_ms = protocol::unix_ms();
  auto verdict = evaluate(st.settings.policy, raw);
  std::string refusal = "declined by policy";
  approval_ask ask;
  ask.what = hooks::action_kind::command;
  ask.raw_command = raw;
  if (verdict == policy_verdict::run && st.svc.rules) {
    // No approval needed, but a forbidding rule still stops the command
    // (or any command of a `;` / `&&` / `|` list).
    if (auto m = check_rules(*st.svc.rules->current(), ask);
        m && m->verdict == rules::decision::deny) {
      verdict = policy_verdict::decline;
      refusal = "declined: " + m->explanation;
    }
  }
  if (verdict == policy_verdict::ask) {
    ask.thread_id = st.settings.thread_id;
    ask.cwd = st.settings.cwd;
    ask.command.thread_id = st.settings.thread_id;
    ask.command.turn_id = st.settings.turn_id;
    ask.command.item_id = cmd.item.id;
    ask.command.started_at_ms = cmd.started_ms;
    ask.command.command = cmd.item.command;
    ask.command.cwd = cmd.item.cwd;
    ask.command.command_actions = cmd.item.command_actions;
    if (auto words = split_simple_command(raw)) ask.command.proposed_execpolicy_amendment = *words;
    ask.digest = command_digest(raw, st.settings.cwd);
    // The status change precedes the item, as Codex orders it; none when
    // the rules or a grant decide at once.
    if (!decided_without_waiting(ask, st.settings.grants, st.svc))
      self->send(st.conversation, atom::awaiting::value, cmd.item.id, true);
  }
  item_started(self, cmd.item, cmd.started_ms);
  st.command = std::move(cmd);
  switch (verdict) {
    case policy_verdict::run:
      return start_exec(self);
    case policy_verdict::decline:
      complete_current(self, item_status::declined, refusal);
      return next_step(self);
    case policy_verdict::ask:
      return ask_approval(self, std::move(ask));
  }
}

void change_files(self_ptr self, const std::string& text) {
  auto& st = self->state;
  patch_step p;
  p.item.id = protocol::new_call_id();
  p.started_ms = protocol::unix_ms();
  // A patch that does not parse or plan never asks: its item fails (or is
  // declined when it reaches outside the writable roots) with the reason.
  std::optional<std::string> refusal;
  bool by_policy = false;
  auto parsed = patch::parse(text);
  if (!parsed) {
    refusal = parsed.error().message;
  } else {
    auto planned = patch::plan(*parsed, st.settings.cwd, st.settings.writable_roots);
    if (!planned) {
      refusal = planned.error().message;
      by_policy = planned.error().refused_by_policy();
    } else {
      p.planned = std::move(*planned);
      p.item.changes = describe_changes(p.planned);
    }
  }
  item_started(self, p.item, p.started_ms);
  st.patch = std::move(p);
  if (refusal) {
    PARLEY_INFO("turn {} event=patch_refused reason=\"{}\"", st.settings.turn_id, *refusal);
    complete_current(self, by_policy ? item_status::declined : item_status::failed,
                     "patch failed: " + *refusal);
    say(self, {"apply_patch failed: " + *refusal}, "commentary");
    return next_step(self);
  }
  approval_ask ask;
  ask.what = hooks::action_kind::file_change;
  ask.thread_id = st.settings.thread_id;
  ask.cwd = st.settings.cwd;
  ask.file.thread_id = st.settings.thread_id;
  ask.file.turn_id = st.settings.turn_id;
  ask.file.item_id = st.patch->item.id;
  ask.file.started_at_ms = st.patch->started_ms;
  ask.changes = st.patch->item.changes;
  ask.digest = changes_digest(st.patch->planned);
  auto verdict = evaluate_file_change(st.settings.policy);
  if (verdict == policy_verdict::run && st.svc.rules) {
    // No approval needed, but a forbidding path rule still stops the change.
    if (auto m = check_rules(*st.svc.rules->current(), ask);
        m && m->verdict == rules::decision::deny) {
      complete_current(self, item_status::declined, "declined: " + m->explanation);
      return next_step(self);
    }
  }
  switch (verdict) {
    case policy_verdict::run:
      return apply_changes(self);
    case policy_verdict::decline:
      complete_current(self, item_status::declined, "declined by policy");
      return next_step(self);
    case policy_verdict::ask:
      break;
  }
  // For file changes the item precedes the status change (protocol.md §4).
  if (!decided_without_waiting(ask, st.settings.grants, st.svc))
    self->send(st.conversation, atom::awaiting::value, st.patch->item.id, true);
  ask_approval(self, std::move(ask));
}

void next_step(self_ptr self) {
  auto& st = self->state;
  self->request(st.svc.model, model_timeout, atom::step::value, st.context)
      .then(
          [self](model_step& step) {
            switch (step.what) {
              case model_step::kind::done:
                return end_turn(self, protocol::turn_status::completed);
              case model_step::kind::say:
                say(self, step.deltas, "final_answer");
                self->state.context.step_results.push_back("said");
                return next_step(self);
              case model_step::kind::run:
                return run_command(self, step.command);
              case model_step::kind::patch:
                return change_files(self, step.patch);
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
    complete_current(self, item_status::declined, "interrupted");
  } else if (st.command) {
    // A running command: its exec dies with this turn (link) and kills the
    // process group; the item ends failed with what it printed so far.
    auto& cmd = *st.command;
    cmd.item.aggregated_output = cmd.output ? cmd.output->aggregated() : std::string{};
    cmd.item.duration_ms = protocol::unix_ms() - cmd.started_ms;
    complete_current(self, item_status::failed, "interrupted");
  }
  finish(self, turn_result{protocol::turn_status::interrupted, std::nullopt});
  self->quit(reason);
}

}  // namespace

process_sink_actor::behavior_type turn(process_sink_actor::stateful_pointer<turn_state> self,
                                       conversation_actor conversation, runtime_services svc,
                                       turn_settings settings) {
  install_default_handlers(self, "turn");
  self->state.conversation = std::move(conversation);
  self->state.svc = std::move(svc);
  self->state.live = count_live(self->state.svc.telemetry, &live_counters::turns);
  self->state.context.user_text = settings.user_text;
  self->state.settings = std::move(settings);
  self->set_exit_handler([self](caf::exit_msg& em) {
    if (!em.reason) return;  // a linked approval or exec finished normally
    auto& st = self->state;
    if (st.command && em.source == st.command->exec_addr && !st.pending_ask) {
      // The command runner died without reporting an exit.
      st.command->exec_addr = caf::actor_addr{};
      complete_current(self, item_status::failed, "command runner failed");
      return next_step(self);
    }
    if (em.source == st.approval_addr && st.pending_ask) {
      // The approval crashed before deciding: fail closed, at once.
      approval_outcome out;
      out.how = approval_outcome::kind::client_error;
      out.detail = "approval failed: " + caf::to_string(em.reason);
      return on_outcome(self, *st.pending_ask, std::move(out));
    }
    interrupt(self, em.reason);
  });
  next_step(self);
  return {
      [self](atom::output, const std::string& chunk) {
        auto& st = self->state;
        if (!st.command || !st.command->output) return;
        auto delta = st.command->output->add(chunk);
        if (delta.empty()) return;
        auto& s = st.settings;
        emit(self, protocol::command_output_delta{s.thread_id, s.turn_id, st.command->item.id,
                                                  std::move(delta)});
      },
      [self](atom::exited, const exit_info& info) {
        auto& st = self->state;
        if (!st.command || !st.command->output) return;
        auto& cmd = *st.command;
        cmd.exec_addr = caf::actor_addr{};
        if (auto tail = cmd.output->finish(); !tail.empty()) {
          auto& s = st.settings;
          emit(self, protocol::command_output_delta{s.thread_id, s.turn_id, cmd.item.id,
                                                    std::move(tail)});
        }
        cmd.item.aggregated_output = cmd.output->aggregated();
        cmd.item.exit_code = info.exit_code;
        cmd.item.duration_ms = info.duration_ms;
        if (info.pid > 0) cmd.item.process_id = std::to_string(info.pid);
        cmd.output.reset();
        complete_current(self, info.exit_code == 0 ? item_status::completed : item_status::failed,
                         "exit code " + std::to_string(info.exit_code));
        next_step(self);
      },
  };
}

}  // namespace parley
