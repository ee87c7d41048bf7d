#include "actors/threads/turn.hpp"

#include <caf/sec.hpp>
#include <functional>

#include "actors/approval/approval.hpp"
#include "actors/core/handlers.hpp"
#include "actors/store/response_items.hpp"
#include "actors/threads/turn_actions.hpp"
#include "actors/threads/turn_detail.hpp"
#include "protocol/client_requests.hpp"
#include "protocol/ids.hpp"

namespace parley {

using protocol::item_status;

namespace turn_detail {

namespace {

constexpr auto model_timeout = std::chrono::minutes(5);

/// How long a step may take. A provider's model (one per turn, spawned by
/// svc.model_for_turn) streams from the network and holds its answer as a
/// promise: the deadline stays, as the promise that the turn ends. The
/// runtime's shared model answers in its handler, or CAF answers for it
/// when it is gone, so its answer is certain and needs no timer (every
/// timed request wakes CAF's clock thread, issue 23).
caf::duration step_timeout(self_ptr self) {
  const auto& st = self->state;
  if (st.svc.model_for_turn || st.model != st.svc.model) return caf::duration{model_timeout};
  return caf::infinite;
}

}  // namespace

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
  complete_reasoning(self);
  complete_streamed(self);
  if (self->state.tokens.total_tokens > self->state.settings.tokens_before.total_tokens)
    result.tokens = self->state.tokens;
  result.last_request_tokens = self->state.last_request_tokens;
  self->send(self->state.conversation, atom::turn_done::value, std::move(result));
}

void end_turn(self_ptr self, protocol::turn_status status) {
  finish(self, turn_result{status, std::nullopt, std::nullopt, std::nullopt});
  self->quit();
}

/// Ends the item in progress (command or file change) with `status`; the
/// model sees `result`.
void complete_current(self_ptr self, item_status status, step_result result) {
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
  } else if (st.request) {
    // A question shows no item; a client tool's call does (inProgress,
    // completed or failed: never declined).
    if (auto item = std::move(st.request->item)) {
      item->status = status == item_status::completed ? item_status::completed : item_status::failed;
      if (!item->duration_ms) item->duration_ms = protocol::unix_ms() - st.request->started_ms;
      item_completed(self, std::move(*item));
    }
    st.request.reset();
  } else if (st.mcp) {
    // An MCP call: completed or failed (never declined), with its time.
    auto item = std::move(st.mcp->item);
    item.status = status == item_status::completed ? item_status::completed : item_status::failed;
    if (!item.duration_ms) item.duration_ms = protocol::unix_ms() - st.mcp->started_ms;
    if (item.status == item_status::failed && !item.result && !item.error)
      item.error = result.detail.empty() ? result.output : result.detail;
    st.mcp.reset();
    item_completed(self, std::move(item));
  }
  st.context.step_results.push_back(std::move(result));
}

// -- commands ----------------------------------------------------------------

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
      // Declined because a pending-approvals limit was reached: the item
      // says why (nobody was asked), as the model's result does.
      if (out.stage == "limit" && self->state.command)
        self->state.command->item.aggregated_output = out.detail;
      complete_current(self, item_status::declined,
                       outcome(step_result::kind::declined,
                               out.stage == "client" ? std::string{} : out.detail));
      if (out.decision.value == protocol::approval_decision::kind::cancel)
        return end_turn(self, protocol::turn_status::interrupted);
      break;
    case kind::client_error:
    case kind::malformed:
      complete_current(self, on_error, outcome(step_result::kind::approval_failed, out.detail));
      break;
    case kind::timed_out:
      complete_current(self, item_status::declined, outcome(step_result::kind::timed_out));
      break;
    case kind::transport_closed:
    case kind::cancelled:
      complete_current(self, item_status::declined, outcome(step_result::kind::cancelled));
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
      self->send(st.svc.rules_keeper, atom::amend::value, d.execpolicy_amendment,
                 st.settings.tenant);
  }
  st.command->approved = true;
  start_exec(self);
}

// -- file changes ------------------------------------------------------------

/// Applies the approved changes, all files or none, once their start is
/// stored; then reports the turn's diff.
void apply_changes(self_ptr self) {
  record_started(self, [self] { write_changes(self); });
}

void write_changes(self_ptr self) {
  auto& st = self->state;
  auto planned = std::move(st.patch->planned);
  if (auto applied = patch::apply(planned); !applied) {
    auto why = applied.error().message;
    PARLEY_INFO("turn {} event=patch_failed item={} reason=\"{}\"", st.settings.turn_id,
                st.patch->item.id, why);
    complete_current(self, item_status::failed, outcome(step_result::kind::patch_failed, why));
    say(self, {"apply_patch failed: " + why}, "commentary");
    return next_step(self);
  }
  st.diff.record(planned);
  complete_current(self, item_status::completed, patch_result(planned));
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

// -- approvals ---------------------------------------------------------------

/// Ends the turn interrupted, after its pending approval has settled.
void end_interrupted(self_ptr self, const caf::error& reason) {
  finish(self,
         turn_result{protocol::turn_status::interrupted, std::nullopt, std::nullopt, std::nullopt});
  self->quit(reason);
}

void on_outcome(self_ptr self, uint64_t key, approval_outcome out) {
  auto& st = self->state;
  if (!st.pending_ask || *st.pending_ask != key) {
    PARLEY_DEBUG("turn {} event=stale_outcome key={} ignored", st.settings.turn_id, key);
    return;  // exactly one decision: this ask was already resolved
  }
  st.pending_ask.reset();
  if (st.interrupting) {
    // Whatever was decided, nothing runs: the approval has voided the
    // client's prompt, so the item ends now, after it.
    complete_current(self, item_status::declined, outcome(step_result::kind::interrupted));
    return end_interrupted(self, *st.interrupting);
  }
  if (st.request) return settle_request(self, out);
  if (st.mcp) return settle_mcp_approval(self, out);
  if (st.command)
    settle(self, out, item_status::failed, [&] { run_accepted(self, out.decision); });
  else
    settle(self, out, item_status::declined, [&] { apply_accepted(self, out.decision); });
}

/// Hands the action to its approval actor, which announces the item
/// (`item_started`) and the waiting status in Codex's order. `restored`:
/// the ask was stored before a restart; it is asked again as it was.
void ask_approval(self_ptr self, approval_ask ask, approval_plan plan,
                  notification_ptr item_started, bool restored) {
  auto& st = self->state;
  ask.key = st.svc.telemetry->next_ask_key();
  st.pending_ask = ask.key;
  auto key = ask.key;
  auto pending
      = self->spawn<caf::linked>(approval, st.conversation, std::move(ask), std::move(plan), st.svc,
                                 std::move(item_started), st.action, restored);
  st.approval_addr = pending.address();
  // No timeout of its own: the approval owns the deadline, and if it dies
  // before answering, its link tells this turn at once (see the exit handler).
  self->request(pending, caf::infinite, atom::decide::value)
      .then([self, key](approval_outcome& out) { on_outcome(self, key, std::move(out)); },
            [self, key](caf::error& err) { on_outcome(self, key, outcome_of_error(err)); });
}

// -- steps -------------------------------------------------------------------

void follow_plan(self_ptr self, approval_ask ask, approval_plan plan, notification_ptr started,
                 const std::function<void()>& run) {
  switch (plan.what) {
    case approval_plan::route::run:
      if (started) send_event(self, std::move(started));
      return run();
    case approval_plan::route::refuse:
      if (started) send_event(self, std::move(started));
      complete_current(self, item_status::declined,
                       outcome(step_result::kind::declined, plan.refusal));
      return next_step(self);
    case approval_plan::route::decide:
      return ask_approval(self, std::move(ask), std::move(plan), std::move(started), false);
  }
}

void run_command(self_ptr self, const model_step& step) {
  auto& st = self->state;
  const auto& raw = step.command;
  command_step cmd;
  cmd.item.id = step.call_id.empty() ? protocol::new_call_id() : step.call_id;
  cmd.item.command = display_command(raw);
  cmd.item.cwd = working_directory(st.settings.cwd, step.workdir);
  cmd.item.command_actions = describe_command(raw);
  cmd.raw = raw;
  cmd.escalated = step.escalate;
  cmd.justification = step.justification;
  cmd.timeout_ms = step.timeout_ms;
  cmd.started_ms = protocol::unix_ms();
  auto ask = command_ask(st.settings, cmd);
  st.action = action_of(st, cmd, ask.digest);
  auto where = place_of(st.settings.sandbox, st.settings.commands_unconfined);
  auto plan = plan_for(st.svc, st.settings.grants, ask,
                       evaluate(st.settings.policy, raw, cmd.escalated, where));
  // A rule that says "prompt" asks even for what the policy runs unasked
  // (Codex's execpolicy decides before its heuristics); `never` asks nobody.
  if (plan.what == approval_plan::route::run && plan.rule
      && plan.rule->verdict == rules::decision::ask
      && st.settings.policy.value != protocol::approval_policy::kind::never)
    plan = plan_for(st.svc, st.settings.grants, ask, policy_verdict::ask);
  if (plan.what == approval_plan::route::refuse && !cmd.escalated
      && where == command_place::unconfined_host && !plan.rule)
    plan.refusal = "declined by policy: parley cannot confine commands on this host, so this "
                   "one would leave the sandbox, and the approval policy asks nobody";
  auto started = started_event(self, cmd.item, cmd.started_ms);
  st.command = std::move(cmd);
  follow_plan(self, std::move(ask), std::move(plan), std::move(started),
              [self] { start_exec(self); });
}

void change_files(self_ptr self, const std::string& text, const std::string& call_id) {
  auto& st = self->state;
  patch_step p;
  p.item.id = call_id.empty() ? protocol::new_call_id() : call_id;
  p.started_ms = protocol::unix_ms();
  // A patch that does not parse or plan never asks: its item fails (or is
  // declined when it reaches outside the writable roots) with the reason.
  if (auto refusal = prepare_patch(st.settings, text, p)) {
    item_started(self, p.item, p.started_ms);
    st.patch = std::move(p);
    PARLEY_INFO("turn {} event=patch_refused reason=\"{}\"", st.settings.turn_id, refusal->reason);
    complete_current(self, refusal->by_policy ? item_status::declined : item_status::failed,
                     outcome(refusal->by_policy ? step_result::kind::declined
                                                : step_result::kind::patch_failed,
                             refusal->reason));
    say(self, {"apply_patch failed: " + refusal->reason}, "commentary");
    return next_step(self);
  }
  auto ask = file_change_ask(st.settings, p);
  st.action = action_of(st, p, text, ask.digest);
  auto plan = plan_for(st.svc, st.settings.grants, ask, evaluate_file_change(st.settings.policy));
  auto started = started_event(self, p.item, p.started_ms);
  st.patch = std::move(p);
  follow_plan(self, std::move(ask), std::move(plan), std::move(started),
              [self] { apply_changes(self); });
}

/// A structured turn may not act: the model is told so, nothing is shown or
/// asked, and the turn goes on (Codex refuses tools in such turns).
void refuse_tool(self_ptr self) {
  PARLEY_INFO("turn {} event=tool_refused reason=structured_turn", self->state.settings.turn_id);
  self->state.context.step_results.push_back(
      outcome(step_result::kind::refused, "tools are not available in a structured turn"));
  next_step(self);
}

/// A message the model said: completed if it streamed, else said now.
void on_said(self_ptr self, model_step& step) {
  auto& st = self->state;
  if (st.settings.review) {  // the reviewer's answer is shown as the review, at the end
    st.review_answer.clear();
    for (auto& d : step.deltas) st.review_answer += d;
    st.context.step_results.push_back(step_result{});
    return next_step(self);
  }
  auto phase = step.phase.empty() ? std::string{"final_answer"} : step.phase;
  if (!step.streamed_item.empty() && st.streaming && st.streaming->model_id == step.streamed_item) {
    std::string text;
    for (auto& d : step.deltas) text += d;
    complete_streamed(self, std::move(text), std::move(phase));
  } else {
    say(self, step.deltas, phase.c_str());
  }
  st.context.step_results.push_back(step_result{});
  next_step(self);
}

/// Steered input joins the turn now, before the model's next request (as
/// Codex records it): shown as the user's message, then seen by the model.
void take_steered(self_ptr self) {
  auto& st = self->state;
  for (auto& msg : st.steered) {
    auto now = protocol::unix_ms();
    item_started(self, msg, now);
    st.context.steered.push_back(protocol::joined_text(msg.content));
    item_completed(self, std::move(msg));
  }
  st.steered.clear();
}

/// turn/steer: taken while the turn goes on; refused once it is ending.
caf::result<atom::ok> on_steer(self_ptr self, protocol::user_message_item& msg) {
  auto& st = self->state;
  if (st.finished || st.interrupting)
    return make_error(errc::invalid_request, "no active turn to steer");
  if (st.settings.shell)  // the user's own command asks no model to read it
    return make_error(errc::invalid_request,
                      "the active turn runs the user's shell command and takes no input");
  if (st.settings.compact)
    return make_error(errc::invalid_request,
                      "the active turn compacts the thread and takes no input");
  if (st.settings.review) return make_error(errc::invalid_request, "cannot steer a review turn");
  PARLEY_DEBUG("turn {} event=steered item={}", st.settings.turn_id, msg.id);
  st.steered.push_back(std::move(msg));
  return atom::ok::value;
}

void next_step(self_ptr self) {
  // The MCP tools the model is offered are current at each request.
  with_mcp_tools(self, [self] { ask_model(self); });
}

void ask_model(self_ptr self) {
  auto& st = self->state;
  take_steered(self);
  st.reasoning_done_in_step = 0;  // what the model streams now answers this step
  st.reasoning_to_skip = 0;
  st.skipping_reasoning_id.clear();
  self->request(st.model, step_timeout(self), atom::step::value, st.context)
      .then(
          [self](model_step& step) {
            if (step.context) store_context(self, std::move(*step.context));
            complete_reasoning(self);
            switch (step.what) {
              case model_step::kind::done:
                // Input steered in while the model answered: it goes on.
                if (!self->state.steered.empty()) return next_step(self);
                if (self->state.settings.review) return end_review(self);
                return end_turn(self, protocol::turn_status::completed);
              case model_step::kind::say:
                return on_said(self, step);
              case model_step::kind::run:
              case model_step::kind::patch:
                if (!self->state.settings.tools_allowed) return refuse_tool(self);
                if (step.what == model_step::kind::run)
                  return run_command(self, step);
                return change_files(self, step.patch, step.call_id);
              case model_step::kind::call_tool:
                if (!self->state.settings.tools_allowed) return refuse_tool(self);
                if (is_mcp_tool(self, step.tool))
                  return call_mcp_tool(self, step,
                                       step.call_id.empty() ? protocol::new_call_id()
                                                            : step.call_id);
                return ask_client(self, step);
              case model_step::kind::ask_user:
              case model_step::kind::request_permissions:
                if (!self->state.settings.tools_allowed) return refuse_tool(self);
                return ask_client(self, step);
            }
          },
          [self](caf::error& err) { model_failed(self, err); });
}

/// The model failed the turn: said, and the turn ends failed.
void model_failed(self_ptr self, const caf::error& err) {
  protocol::turn_error e;
  e.message = "model failed: " + message_of(err);
  e.codex_error_info = "other";
  auto& s = self->state.settings;
  emit(self, protocol::error_notification{s.thread_id, s.turn_id, e, false});
  finish(self, turn_result{protocol::turn_status::failed, e, std::nullopt, std::nullopt});
  self->quit();
}

/// A compaction turn: the model summarises the thread's history as the
/// store has it; the compacted history is stored and the turn completes.
void compact_thread(self_ptr self) {
  auto& st = self->state;
  begin_compaction(self);
  auto ask = [self](std::vector<nlohmann::json> history) {
    auto& s = self->state;
    s.context.compact = true;
    s.context.history = std::move(history);
    self->request(s.model, step_timeout(self), atom::step::value, s.context)
        .then(
            [self](model_step& step) {
              if (!step.compacted)
                return model_failed(self, make_error(errc::internal, "the model wrote no summary"));
              end_compaction(self, std::move(*step.compacted));
              end_turn(self, protocol::turn_status::completed);
            },
            [self](caf::error& err) { model_failed(self, err); });
  };
  self->request(st.svc.store, std::chrono::seconds(30), atom::load::value, st.settings.thread_id)
      .then([self,
             ask](stored_thread& t) { ask(store::model_history(t, self->state.settings.turn_id)); },
            [ask](caf::error&) { ask({}); });  // nothing stored yet: nothing to summarise
}

/// turn/interrupt or shutdown: resolve what is pending, then end.
void interrupt(self_ptr self, const caf::error& reason) {
  auto& st = self->state;
  if (st.pending_ask) {
    // The approval settles first (its prompt voided, the thread no longer
    // waiting); its outcome then ends the item and the turn (on_outcome).
    if (!st.interrupting) {
      st.interrupting = reason;
      self->send_exit(st.approval_addr, reason);
    }
    return;
  }
  if (st.mcp) cancel_mcp_call(self);
  if (st.command) {
    // A running command: its exec dies with this turn (link) and kills the
    // process group; the item ends failed with what it printed so far.
    auto& cmd = *st.command;
    cmd.item.aggregated_output = cmd.output ? cmd.output->aggregated() : std::string{};
    cmd.item.duration_ms = protocol::unix_ms() - cmd.started_ms;
    auto told = outcome(step_result::kind::interrupted);
    told.output = *cmd.item.aggregated_output;
    complete_current(self, item_status::failed, std::move(told));
  }
  end_interrupted(self, reason);
}

// -- what the turn hears ------------------------------------------------------

/// An exit signal: a linked helper went down, or the turn is interrupted.
void on_exit_signal(self_ptr self, const caf::exit_msg& em) {
  if (!em.reason) return;  // a linked approval or exec finished normally
  auto& st = self->state;
  if (is_errc(em.reason, errc::unloading) && em.source != st.approval_addr) {
    // Parked: the thread unloads while this turn waits on a person. Nothing
    // ends: its approval stops undecided (the link), the store keeps the ask,
    // and the turn goes on from it when the thread loads again.
    st.finished = true;
    return self->quit(em.reason);
  }
  if (st.command && em.source == st.command->exec_addr && !st.pending_ask) {
    // The command runner died without reporting an exit.
    st.command->exec_addr = caf::actor_addr{};
    complete_current(self, item_status::failed,
                     outcome(step_result::kind::failed_to_start, "command runner failed"));
    if (st.settings.shell) return end_turn(self, protocol::turn_status::failed);
    return next_step(self);
  }
  if (em.source == st.approval_addr) {
    // The approval went down without an outcome: fail closed, at once.
    // (After its outcome, its end means nothing more.)
    if (!st.pending_ask) return;
    approval_outcome out;
    out.how = approval_outcome::kind::client_error;
    out.detail = "approval failed: " + caf::to_string(em.reason);
    return on_outcome(self, *st.pending_ask, std::move(out));
  }
  interrupt(self, em.reason);
}

namespace {

/// The turn's model: its own (watching it) or the runtime's shared one.
model_actor model_of(self_ptr self) {
  auto& svc = self->state.svc;
  if (!svc.model_for_turn) return svc.model;
  return svc.model_for_turn(self->system(), caf::actor_cast<turn_actor>(self));
}

}  // namespace

}  // namespace turn_detail

turn_actor::behavior_type turn(turn_actor::stateful_pointer<turn_state> self,
                                       conversation_actor conversation, runtime_services svc,
                                       turn_settings settings) {
  using namespace turn_detail;
  install_default_handlers(self, "turn");
  self->state.conversation = std::move(conversation);
  self->state.svc = std::move(svc);
  self->state.live = count_live(self->state.svc.telemetry, &live_counters::turns);
  self->state.context.user_text = settings.user_text;
  self->state.context.steered = settings.steered;
  self->state.context.thread_id = settings.thread_id;
  self->state.context.turn_id = settings.turn_id;
  self->state.context.last_request_tokens = settings.last_request_tokens;
  self->state.tokens = settings.tokens_before;
  for (const auto& t : settings.dynamic_tools)
    self->state.client_tools.push_back(protocol::model_function_tool(t));
  self->state.context.offered_tools = self->state.client_tools;
  self->state.settings = std::move(settings);
  // The user's own command asks no model: it gets none.
  if (!self->state.settings.shell) self->state.model = model_of(self);
  self->set_exit_handler([self](caf::exit_msg& em) { on_exit_signal(self, em); });
  if (self->state.settings.shell) {
    run_user_shell(self);
  } else if (self->state.settings.compact) {
    compact_thread(self);
  } else if (self->state.settings.review) {
    start_review(self);
  } else if (self->state.settings.resume) {
    resume(self, *self->state.settings.resume);
  } else {
    next_step(self);
  }
  return {
      [self](atom::output, const std::string& chunk) { on_output(self, chunk); },
      [self](atom::exited, const exit_info& info) { on_exited(self, info); },
      [self](atom::delta, model_delta& d) { on_model_delta(self, d); },
      [self](atom::delta, model_deltas& ds) { on_model_deltas(self, ds); },
      [self](atom::notice, model_notice& n) { on_model_notice(self, n); },
      [self](atom::steer, protocol::user_message_item& msg) { return on_steer(self, msg); },
      [self](atom::mcp_progress, std::string& token, std::string& params) {
        on_mcp_progress(self, token, params);
      },
      [self](atom::pressure, bool on) {
        // The user's own command has no model; its output is capped.
        if (self->state.model)
          self->send<caf::message_priority::high>(self->state.model, atom::pressure::value, on);
      },
  };
}

}  // namespace parley
