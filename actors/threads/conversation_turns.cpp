// The conversation's turns: starting one (its settings, its first events),
// ending it, interrupting it, and relaying its approvals' asks to the client
// in order with everything else the thread says.

#include <algorithm>

#include "actors/approval/approval.hpp"
#include "actors/core/tenant.hpp"
#include "actors/core/log.hpp"
#include "actors/store/response_items.hpp"
#include "actors/core/command_sandbox.hpp"
#include "actors/threads/conversation_detail.hpp"
#include "actors/threads/review_prompt.hpp"
#include "actors/threads/turn.hpp"
#include "protocol/ids.hpp"
#include "protocol/mcp_tool_approval.hpp"

namespace parley::conversation_detail {

namespace {

protocol::turn describe_active(const active_turn& t, bool with_start) {
  protocol::turn out;
  out.id = t.id;
  out.status = protocol::turn_status::in_progress;
  if (with_start) out.started_at = t.started_at;
  return out;
}

/// Where a turn's patches may write: anywhere with full access, otherwise
/// the cwd, the sandbox's extra writable roots and the paths granted for
/// the session.
std::vector<std::string> writable_roots_of(const conversation_settings& s,
                                           const sandbox_grant& granted) {
  using kind = protocol::sandbox_policy::kind;
  if (s.sandbox.type == kind::danger_full_access || s.sandbox.type == kind::external_sandbox)
    return {"/"};
  std::vector<std::string> roots{s.cwd};
  roots.insert(roots.end(), s.sandbox.writable_roots.begin(), s.sandbox.writable_roots.end());
  roots.insert(roots.end(), granted.write.begin(), granted.write.end());
  return roots;
}

/// turn/start's overrides stick to the thread.
void apply_overrides(conversation_state& st, const protocol::turn_start_params& params) {
  if (params.cwd) st.settings.cwd = *params.cwd;
  if (params.approval_policy_) st.settings.policy = *params.approval_policy_;
  if (params.sandbox_policy_) st.settings.sandbox = *params.sandbox_policy_;
  if (params.model) st.settings.model = *params.model;
  st.meta.cwd = st.settings.cwd;
  st.meta.model = st.settings.model;
}

/// The settings a turn runs with: a snapshot of the thread's.
turn_settings snapshot_of(const conversation_state& st, const std::string& turn_id,
                          std::string user_text) {
  turn_settings ts;
  ts.thread_id = st.meta.id;
  ts.tenant = tenant_or_default(st.meta.tenant);
  ts.turn_id = turn_id;
  ts.cwd = st.settings.cwd;
  ts.policy = st.settings.policy;
  if (st.grants) ts.grants = *st.grants;
  if (st.granted) ts.granted = *st.granted;
  ts.writable_roots = writable_roots_of(st.settings, ts.granted);
  ts.sandbox = st.settings.sandbox;
  const auto& sandbox = st.svc->config->sandbox;
  // Only a thread that has a sandbox can leave it (an external sandbox is
  // the host's own).
  ts.commands_unconfined = sandbox && !sandbox->confines() && sandbox->unconfined_ok
                           && place_of(ts.sandbox, true) == command_place::unconfined_host;
  ts.user_text = std::move(user_text);
  if (st.tokens) ts.tokens_before = *st.tokens;
  ts.last_request_tokens = st.last_request_tokens;
  ts.dynamic_tools = st.settings.dynamic_tools;
  return ts;
}

/// A new turn's settings: the snapshot, and what turn/start asks of it.
turn_settings settings_of_turn(const conversation_state& st, const active_turn& t,
                               const protocol::turn_start_params& params, std::string user_text) {
  auto ts = snapshot_of(st, t.id, std::move(user_text));
  ts.tools_allowed = !params.output_schema;
  return ts;
}

/// turn/started, then the user's message as an item (started, completed).
void announce_turn(self_ptr self, protocol::turn_start_params& params, int64_t now_ms) {
  auto& st = self->state;
  const auto& turn_id = st.active->id;
  update_status(self);
  emit_stored(
      self, turn_started_record{turn_id, st.active->started_at},
      make_event(*st.svc, protocol::turn_started{st.meta.id, describe_active(*st.active, true)}));
  protocol::user_message_item msg;
  msg.id = protocol::new_uuid_v7();
  msg.content = std::move(params.input);
  msg.client_id = params.client_user_message_id;
  emit(self, make_event(*st.svc, protocol::item_started{st.meta.id, turn_id, msg, now_ms}));
  // A model that keeps its context still gets the message from here: it is
  // the thread's history even when the model never answers.
  bool kept = st.svc->model_keeps_context;
  auto context = kept ? store::response_items_of(msg) : std::vector<nlohmann::json>{};
  emit_stored(self, item_record{turn_id, msg, !kept},
              make_event(*st.svc, protocol::item_completed{st.meta.id, turn_id, msg, now_ms}));
  if (kept) post_stored(self, context_record{turn_id, std::move(context)}, [] {});
}

/// Who an approval asks: every subscriber, the client that started the turn
/// first.
client_list ordered_clients(self_ptr self) {
  auto& st = self->state;
  client_list out;
  for (auto& c : st.subscribers)
    if (std::find(st.joining.begin(), st.joining.end(), c) == st.joining.end()) out.push_back(c);
  if (st.active) {
    auto owner = std::find(out.begin(), out.end(), st.active->owner);
    if (owner != out.end()) std::rotate(out.begin(), owner, owner + 1);
  }
  return out;
}

/// A turn starting now for `owner`, with a new id.
/// One more running turn for the thread's tenant and `client`'s
/// connection: refused with -32001 past either's limit.
caf::expected<usage_grant> admit_turn(const conversation_state& st, const client_actor& client) {
  return acquire_usage(st.svc->telemetry, usage_kind::running_turns, tenant_or_default(st.meta.tenant),
                       client ? client.id() : 0, st.svc->config->limits);
}

active_turn new_active_turn(const client_actor& owner) {
  active_turn t;
  t.id = protocol::new_uuid_v7();
  t.started_ms = protocol::unix_ms();
  t.started_at = t.started_ms / 1000;
  t.owner = owner;
  return t;
}

/// Spawns the active turn `t` with its settings and says it started (the
/// caller has answered its request already: the reply leaves first).
void begin_turn(self_ptr self, active_turn t, turn_settings ts) {
  auto& st = self->state;
  t.handle = self->spawn<caf::monitored>(turn, caf::actor_cast<conversation_actor>(self), *st.svc,
                                         std::move(ts));
  st.active = std::move(t);
  apply_pressure(self);
  update_status(self);
  emit_stored(
      self, turn_started_record{st.active->id, st.active->started_at},
      make_event(*st.svc, protocol::turn_started{st.meta.id, describe_active(*st.active, true)}));
}

/// begin_turn after the reply ({}): it leaves before the turn's first
/// event, as Codex orders them.
caf::result<atom::ok> launch_turn(self_ptr self, active_turn t, turn_settings ts) {
  auto rp = self->make_response_promise<atom::ok>();
  rp.deliver(atom::ok::value);
  begin_turn(self, std::move(t), std::move(ts));
  return rp;
}

}  // namespace

caf::result<protocol::turn_start_response> start_turn(self_ptr self,
                                                      protocol::turn_start_params& params,
                                                      client_actor client) {
  auto& st = self->state;
  if (!st.active) {
    if (auto refused = drain_refusal(*st.svc)) return refused;
  }
  if (!st.active && !st.meta.ephemeral) {
    if (auto refused = store_refusal(*st.svc)) return refused;
  }
  bool joined = subscribe(self, client);
  if (st.active && st.active->user_shell)
    return make_error(errc::invalid_request,
                      "the user's shell command is running (" + st.active->id
                          + "); a turn starts once it ends");
  if (st.active && st.active->compaction)
    return make_error(errc::invalid_request, "the thread is being compacted (" + st.active->id
                                                 + "); a turn starts once it ends");
  if (st.active && st.active->review)
    return make_error(errc::invalid_request, "a review is running (" + st.active->id
                                                 + "); a turn starts once it ends");
  if (st.active) {
    // As Codex: the input is steered into the active turn and the caller
    // gets that turn's id (and, if it just joined, the turn's waiting
    // approvals after that).
    if (!params.input.empty() && !st.active->interrupt_sent)
      steer_active(self, std::move(params.input), params.client_user_message_id,
                   [](const caf::error&) {});
    auto rp = self->make_response_promise<protocol::turn_start_response>();
    rp.deliver(protocol::turn_start_response{describe_active(*st.active, false)});
    if (joined) offer_waiting_approvals(self, client);
    return rp;
  }
  auto admitted = admit_turn(st, client);
  if (!admitted) return std::move(admitted.error());
  apply_overrides(st, params);
  auto t = new_active_turn(client);
  t.usage = std::move(*admitted);
  auto now_ms = t.started_ms;
  auto text = protocol::joined_text(params.input);
  if (st.meta.preview.empty()) st.meta.preview = text;
  st.meta.updated_at = t.started_at;
  auto settings = settings_of_turn(st, t, params, std::move(text));
  t.handle = self->spawn<caf::monitored>(turn, caf::actor_cast<conversation_actor>(self), *st.svc,
                                         std::move(settings));
  st.active = std::move(t);
  apply_pressure(self);
  // The reply leaves before the turn's first event, as Codex orders them.
  auto rp = self->make_response_promise<protocol::turn_start_response>();
  rp.deliver(protocol::turn_start_response{describe_active(*st.active, false)});
  announce_turn(self, params, now_ms);
  return rp;
}

caf::result<atom::ok> start_shell_turn(self_ptr self,
                                       const protocol::thread_shell_command_params& params,
                                       client_actor client) {
  auto& st = self->state;
  if (params.timeout_ms && *params.timeout_ms < 0)
    return make_error(errc::invalid_request, "timeoutMs must be non-negative");
  if (params.command.find_first_not_of(" \t\r\n") == std::string::npos)
    return make_error(errc::invalid_request, "command must not be empty");
  // A turn runs: its commands and the user's would race on the same files,
  // and its model would not see this one in order. parley runs the user's
  // command between turns only.
  if (st.active)
    return make_error(errc::invalid_request,
                      "a turn is running (" + st.active->id
                          + "): thread/shellCommand runs between turns; interrupt it or wait");
  if (auto refused = drain_refusal(*st.svc)) return refused;
  if (!st.meta.ephemeral) {
    if (auto refused = store_refusal(*st.svc)) return refused;
  }
  auto admitted = admit_turn(st, client);
  if (!admitted) return std::move(admitted.error());
  subscribe(self, client);
  auto t = new_active_turn(client);
  t.usage = std::move(*admitted);
  t.user_shell = true;
  st.meta.updated_at = t.started_at;
  auto ts = snapshot_of(st, t.id, std::string{});
  ts.tools_allowed = false;
  // Codex: an hour when none is given; zero times out at once. Both are
  // bounded by the configured maximum (command_timeout, in the runner).
  user_shell_command shell;
  shell.command = params.command;
  shell.timeout_ms = !params.timeout_ms ? int64_t{3'600'000} : std::max<int64_t>(1, *params.timeout_ms);
  ts.shell = std::move(shell);
  return launch_turn(self, std::move(t), std::move(ts));
}

caf::result<atom::ok> start_compact_turn(self_ptr self, client_actor client) {
  auto& st = self->state;
  // Codex 0.169 replaces a running turn with the compaction; parley keeps
  // the turn and refuses, so nothing the user started is cut short.
  if (st.active)
    return make_error(errc::invalid_request,
                      "a turn is running (" + st.active->id
                          + "): thread/compact/start compacts between turns; interrupt it or wait");
  if (auto refused = drain_refusal(*st.svc)) return refused;
  if (!st.meta.ephemeral) {
    if (auto refused = store_refusal(*st.svc)) return refused;
  }
  auto admitted = admit_turn(st, client);
  if (!admitted) return std::move(admitted.error());
  subscribe(self, client);
  auto t = new_active_turn(client);
  t.usage = std::move(*admitted);
  st.meta.updated_at = t.started_at;
  auto ts = snapshot_of(st, t.id, std::string{});
  ts.tools_allowed = false;
  ts.compact = true;
  t.compaction = true;
  return launch_turn(self, std::move(t), std::move(ts));
}

caf::result<protocol::review_start_response> start_review_turn(
    self_ptr self, protocol::review_start_params& params, client_actor client) {
  auto& st = self->state;
  if (auto refusal = protocol::review_target_refusal(params.target))
    return make_error(errc::invalid_request, *refusal);
  // Codex 0.169 replaces a running turn with the review; parley keeps the
  // turn and refuses, as it does for a compaction.
  if (st.active)
    return make_error(errc::invalid_request,
                      "a turn is running (" + st.active->id
                          + "): review/start reviews between turns; interrupt it or wait");
  if (auto refused = drain_refusal(*st.svc)) return refused;
  if (!st.meta.ephemeral) {
    if (auto refused = store_refusal(*st.svc)) return refused;
  }
  auto admitted = admit_turn(st, client);
  if (!admitted) return std::move(admitted.error());
  subscribe(self, client);
  auto t = new_active_turn(client);
  t.usage = std::move(*admitted);
  t.review = true;
  st.meta.updated_at = t.started_at;
  auto ts = snapshot_of(st, t.id, std::string{});
  ts.review = params.target;
  // The reply carries the turn as Codex's does: in progress, its one item
  // the review's label as the user's request.
  protocol::review_start_response r;
  r.turn_.id = t.id;
  r.turn_.items_view = "notLoaded";
  protocol::user_message_item asked;
  asked.id = t.id;
  asked.content.push_back(protocol::user_input::make_text(review::hint(params.target)));
  r.turn_.items.emplace_back(std::move(asked));
  r.review_thread_id = st.meta.id;
  auto rp = self->make_response_promise<protocol::review_start_response>();
  rp.deliver(std::move(r));
  begin_turn(self, std::move(t), std::move(ts));
  return rp;
}

caf::result<protocol::turn_steer_response> steer_turn(self_ptr self,
                                                      protocol::turn_steer_params& params) {
  auto& st = self->state;
  // Codex's checks, in its order and words. A turn already told to stop
  // takes nothing more: the input would be lost with it.
  if (!st.active || st.active->interrupt_sent)
    return make_error(errc::invalid_request, "no active turn to steer");
  if (st.active->user_shell)
    return make_error(errc::invalid_request,
                      "the active turn runs the user's shell command and takes no input");
  if (st.active->compaction)
    return make_error(errc::invalid_request,
                      "the active turn compacts the thread and takes no input");
  if (st.active->review) return make_error(errc::invalid_request, "cannot steer a review turn");
  if (st.active->id != params.expected_turn_id)
    return make_error(errc::invalid_request, "expected active turn id `" + params.expected_turn_id
                                                 + "` but found `" + st.active->id + "`");
  if (params.input.empty()) return make_error(errc::invalid_request, "input must not be empty");
  auto rp = self->make_response_promise<protocol::turn_steer_response>();
  steer_active(self, std::move(params.input), params.client_user_message_id,
               [rp, turn_id = st.active->id](const caf::error& err) mutable {
                 if (err)
                   rp.deliver(make_error(errc::invalid_request, "no active turn to steer"));
                 else
                   rp.deliver(protocol::turn_steer_response{turn_id});
               });
  return rp;
}

void steer_active(self_ptr self, std::vector<protocol::user_input> input,
                  std::optional<std::string> client_id,
                  std::function<void(const caf::error&)> done) {
  auto& st = self->state;
  protocol::user_message_item msg;
  msg.id = protocol::new_uuid_v7();
  msg.content = std::move(input);
  msg.client_id = std::move(client_id);
  auto turn_id = st.active->id;
  PARLEY_INFO("conversation {} event=steer turn={} item={}", st.meta.id, turn_id, msg.id);
  // The turn shows it (item/started, item/completed) when its model is
  // about to see it, as Codex does: after the step under way. A turn that
  // is ending (or gone) refuses it, and the steer fails rather than vanish.
  self->request(st.active->handle, std::chrono::seconds(30), atom::steer::value, std::move(msg))
      .then([done](atom::ok) { done(caf::error{}); },
            [self, done, turn_id](caf::error& err) {
              PARLEY_INFO("conversation {} event=steer_refused turn={} reason={}",
                          self->state.meta.id, turn_id, caf::to_string(err));
              done(err);
            });
}

void finalize_turn(self_ptr self, turn_result result) {
  auto& st = self->state;
  if (!st.active) return;
  if (result.tokens) st.tokens = *result.tokens;
  if (result.last_request_tokens) st.last_request_tokens = *result.last_request_tokens;
  auto now_ms = protocol::unix_ms();
  protocol::turn done;
  done.id = st.active->id;
  done.status = result.status;
  done.error = std::move(result.error);
  if (st.active->store_error) {
    // Stopped because the store failed one of its records: never completed.
    done.status = protocol::turn_status::failed;
    done.error = protocol::turn_error{*st.active->store_error, "other", std::nullopt};
  }
  done.started_at = st.active->started_at;
  done.completed_at = now_ms / 1000;
  done.duration_ms = now_ms - st.active->started_ms;
  st.last_ended = done;
  auto turn_id = st.active->id;
  bool told_error = st.active->store_error.has_value();
  // An MCP server's elicitation of the turn is cancelled with it (the
  // approval settles "interrupt" and voids the clients' prompts).
  if (st.approvals)
    for (auto& [key, w] : *st.approvals)
      if (!w.elicitation_turn.empty() && w.elicitation_turn == turn_id)
        self->send_exit(w.handle, make_error(errc::interrupted, "turn ended"));
  st.active.reset();
  st.meta.updated_at = now_ms / 1000;
  update_status(self);
  // Reported once stored; a turn whose end was not stored ends failed.
  auto report = [self, done, turn_id, told_error](caf::error err) mutable {
    auto& s = self->state;
    if (err) {
      PARLEY_ERROR("conversation {} event=turn_end_not_stored turn={} error={}", s.meta.id,
                   turn_id, message_of(err));
      done.status = protocol::turn_status::failed;
      done.error = protocol::turn_error{"the store could not keep this turn: " + message_of(err),
                                        "other", std::nullopt};
      if (s.last_ended && s.last_ended->id == turn_id) s.last_ended = done;
    }
    if (done.status == protocol::turn_status::failed && (err || told_error))
      broadcast(self, make_event(*s.svc, protocol::error_notification{s.meta.id, turn_id,
                                                                     *done.error, false}));
    broadcast(self, make_event(*s.svc, protocol::turn_completed{s.meta.id, done}));
  };
  post_durable(self, turn_completed_record{done}, std::move(report));
  if (!st.shutdown_waiters.empty()) return close(self);
  arm_idle_timer(self);
}

void interrupt_active(self_ptr self) {
  auto& st = self->state;
  if (!st.active || st.active->interrupt_sent) return;
  st.active->interrupt_sent = true;
  self->send_exit(st.active->handle, make_error(errc::interrupted, "turn interrupted"));
}

turn_marks marks_now(const conversation_state& st) {
  turn_marks m;
  if (st.active) m.active_id = st.active->id;
  m.last_ended = st.last_ended.copy();
  return m;
}

void mark_turns(const turn_marks& marks, std::vector<protocol::turn>& turns) {
  for (auto& t : turns) {
    if (marks.active_id && t.id == *marks.active_id) {
      t.status = protocol::turn_status::in_progress;
    } else if (marks.last_ended && t.id == marks.last_ended->id) {
      const auto& ended = *marks.last_ended;
      t.status = ended.status;
      t.error = ended.error;
      t.completed_at = ended.completed_at;
      t.duration_ms = ended.duration_ms;
    }
  }
}

// -- approvals ----------------------------------------------------------------

namespace {

/// An MCP server's elicitation from a client's own tool call
/// (mcpServer/tool/call) belongs to the thread, not to a turn.
bool turnless(const approval_ref& ref) {
  return ref.request == client_request::elicitation && ref.turn_id.empty();
}

/// Whether the approval's turn (if it has one) is the active one.
bool of_live_turn(const conversation_state& st, const approval_ref& ref) {
  return turnless(ref) || (st.active && st.active->id == ref.turn_id);
}

}  // namespace

caf::result<approval_actor> start_elicitation(self_ptr self, approval_ask& ask) {
  auto& st = self->state;
  ask.key = st.svc->telemetry->next_ask_key();
  ask.tenant = st.meta.tenant;
  ask.cwd = st.settings.cwd;
  // Its turn must be the active one; a turnless one needs only the thread.
  approval_ref ref{ask.key, ask.request_turn, ask.request_item, client_request::elicitation};
  if (!of_live_turn(st, ref))
    return make_error(errc::withdrawn, "the turn of this elicitation is over");
  // The thread's policy may say nobody is to be asked (Codex: `never`, or
  // granular without mcp_elicitations): the server's asker declines it.
  if (protocol::elicitations_rejected(st.settings.policy)) {
    PARLEY_INFO("conversation {} event=elicitation_declined_by_policy server={} turn={}",
                st.meta.id, ask.request_params.value("serverName", ""),
                ask.request_turn.empty() ? "null" : ask.request_turn);
    return make_error(errc::withdrawn,
                      "the thread's approval policy declines MCP elicitations without asking");
  }
  // Not linked: the MCP server's actor owns it (an exit signal from it
  // withdraws it), and it ends by its own deadline once started. One its
  // asker never starts (gone before the handle reached it) ends on the
  // deadline of token 0.
  auto handle = self->spawn(approval, caf::actor_cast<conversation_actor>(self), std::move(ask),
                            approval_plan{}, *st.svc, nullptr, action_record{}, false);
  self->delayed_send(handle, std::chrono::seconds(30), atom::deadline::value, uint64_t{0});
  return handle;
}

caf::result<client_list> clients_to_ask(self_ptr self, const approval_ref& ref) {
  auto& st = self->state;
  auto rp = self->make_response_promise<client_list>();
  if (!of_live_turn(st, ref)) {
    rp.deliver(make_error(errc::withdrawn, "the turn of this approval is over"));
    return rp;
  }
  // Past a pending-approvals limit it is asked of nobody: it fails closed
  // (the approval declines its action, naming the limit).
  if (st.approvals) {
    auto w = st.approvals->find(ref.key);
    if (w != st.approvals->end() && w->second.refused) {
      rp.deliver(w->second.refused);
      return rp;
    }
  }
  // Answered from the outbox: every event queued before the ask (the item's
  // start above all) has left for every client before any of them is asked.
  post(self, [self, rp]() mutable { rp.deliver(ordered_clients(self)); });
  return rp;
}

void mark_waiting(self_ptr self, const approval_ref& ref, const approval_actor& approval) {
  auto& st = self->state;
  if (!of_live_turn(st, ref)) return;
  // A question (and an MCP server's elicitation in a turn) shows
  // waitingOnUserInput; a client tool's call waits on no person (no flag,
  // and it never lets the thread park). A turnless elicitation sets no
  // flag: the thread's status is its turns'.
  if (turnless(ref)) {
    // no turn to flag
  } else if (ref.request == client_request::user_input || ref.request == client_request::elicitation
             || ref.request == client_request::mcp_approval)
    st.active->waiting_input.insert(ref.item_id);
  else if (ref.request != client_request::dynamic_tool)
    st.active->waiting.insert(ref.item_id);
  waiting_approval w;
  w.handle = approval;
  if (ref.request == client_request::elicitation) w.elicitation_turn = ref.turn_id;
  w.live = count_live(st.svc->telemetry, &live_counters::pending_asks);
  auto owner = !turnless(ref) && st.active->owner ? st.active->owner.id() : 0;
  auto admitted = acquire_usage(st.svc->telemetry, usage_kind::pending_approvals,
                                tenant_or_default(st.meta.tenant), owner, st.svc->config->limits);
  if (admitted)
    w.usage = std::move(*admitted);
  else
    w.refused = std::move(admitted.error());
  st.approvals.ensure().emplace(ref.key, std::move(w));
  update_status(self);
}

void settle_ask(self_ptr self, const approval_ref& ref) {
  auto& st = self->state;
  if (st.approvals) st.approvals->erase(ref.key);
  if (st.active && st.active->id == ref.turn_id) {
    st.active->waiting.erase(ref.item_id);
    st.active->waiting_input.erase(ref.item_id);
  }
  update_status(self);
}

void restore_turn(self_ptr self, resumed_turn& r) {
  auto& st = self->state;
  if (st.active || st.closing) return;  // a turn runs already: the stored one is over
  auto& a = r.action;
  // The turn goes on with the settings it ran with; they stick, as a
  // turn/start's overrides do.
  if (!a.thread_cwd.empty()) st.settings.cwd = a.thread_cwd;
  try {
    if (!a.policy.is_null()) st.settings.policy = a.policy.get<protocol::approval_policy>();
  } catch (const std::exception&) {
    st.settings.policy = protocol::approval_policy::on_request();  // asks: fails safe
  }
  try {
    if (!a.sandbox.is_null()) st.settings.sandbox = a.sandbox.get<protocol::sandbox_policy>();
  } catch (const std::exception&) {
    // Confined to the cwd and nothing else: fails safe.
    st.settings.sandbox = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::read_only);
  }
  active_turn t;
  t.id = r.turn_id;
  // The server goes on with its own turn: counted, never refused.
  if (st.svc->telemetry)
    t.usage = st.svc->telemetry->usage->force(usage_kind::running_turns,
                                             tenant_or_default(st.meta.tenant), 0);
  t.started_at = r.started_at;
  t.started_ms = r.started_at * 1000;
  auto ts = snapshot_of(st, t.id, std::move(r.user_text));
  ts.steered = std::move(r.steered);
  if (!a.writable_roots.empty()) ts.writable_roots = a.writable_roots;
  ts.resume = a;
  PARLEY_INFO("conversation {} event=restore_turn turn={} phase={} item={}", st.meta.id, t.id,
              to_string(a.at), a.item_id);
  t.handle = self->spawn<caf::monitored>(turn, caf::actor_cast<conversation_actor>(self), *st.svc,
                                         std::move(ts));
  st.active = std::move(t);
  apply_pressure(self);
  update_status(self);
}

void offer_waiting_approvals(self_ptr self, const client_actor& client) {
  if (!self->state.approvals) return;
  for (auto& [key, w] : *self->state.approvals)
    if (!w.refused) self->send(w.handle, atom::ask::value, client);  // refused: asked of nobody
}

}  // namespace parley::conversation_detail
