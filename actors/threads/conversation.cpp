// The conversation actor: the messages it handles, and the requests of its
// clients. How events leave is in conversation_events.cpp, how turns and
// their approvals run in conversation_turns.cpp.

#include "actors/threads/conversation.hpp"

#include <algorithm>

#include "actors/core/handlers.hpp"
#include "actors/threads/conversation_detail.hpp"
#include "actors/core/log.hpp"
#include "protocol/client_requests.hpp"

namespace parley {

namespace conversation_detail {

namespace {

protocol::thread_session_response describe_session(self_ptr self) {
  auto& st = self->state;
  protocol::thread_session_response r;
  r.thread_ = st.meta;
  r.model = st.settings.model;
  r.model_provider = st.meta.model_provider;
  r.cwd = st.settings.cwd;
  r.approval_policy_ = st.settings.policy;
  r.approvals_reviewer = st.settings.reviewer;
  r.sandbox = st.settings.sandbox;
  return r;
}

// -- client requests ---------------------------------------------------------

/// thread/start (or a fork's first open): stored, then subscribe, describe,
/// announce. A thread whose start the store did not keep was never started:
/// the caller gets the store's reason and the conversation stops.
caf::result<protocol::thread_session_response> open_thread(self_ptr self, client_actor client) {
  auto& st = self->state;
  if (st.closing) return unloading_error(self);
  auto rp = self->make_response_promise<protocol::thread_session_response>();
  auto session = describe_session(self);
  if (st.fork_turns) session.thread_.turns = std::move(*st.fork_turns);  // a fork's copied history
  st.fork_turns.reset();
  std::vector<context_item> fork_context;
  if (st.fork_context) fork_context = std::move(*st.fork_context);
  st.fork_context.reset();
  auto created = st.meta;
  created.turns = std::move(st.meta.turns);  // stored with the thread, not kept here
  st.meta.turns.clear();
  post_durable(self, thread_created_record{std::move(created), std::move(fork_context)},
               [self, rp, client, session = std::move(session)](caf::error err) mutable {
                 auto& s = self->state;
                 if (err) {
                   rp.deliver(is_errc(err, errc::overloaded)
                                  ? err
                                  : make_error(errc::overloaded, "the store could not keep "
                                                                 "the new thread: "
                                                                     + message_of(err)));
                   s.closing = true;
                   return quit_if_done(self);
                 }
                 subscribe(self, client);
                 rp.deliver(std::move(session));
                 broadcast(self, make_event(*s.svc, protocol::thread_started{s.meta}));
               });
  return rp;
}

/// thread/resume of a loaded thread: its overrides stick; its turns come
/// from the store unless excluded.
caf::result<protocol::thread_session_response> resume_thread(
    self_ptr self, client_actor client, const protocol::thread_resume_params& params) {
  auto& st = self->state;
  if (st.closing) return unloading_error(self);
  bool joined = subscribe(self, client);
  const auto& o = params.overrides;
  if (o.cwd) st.meta.cwd = st.settings.cwd = *o.cwd;
  if (o.model) st.meta.model = st.settings.model = *o.model;
  if (o.approval_policy_) st.settings.policy = *o.approval_policy_;
  if (o.sandbox) st.settings.sandbox = protocol::sandbox_policy::from_mode(*o.sandbox);
  if (o.approvals_reviewer) st.settings.reviewer = *o.approvals_reviewer;
  auto rp = self->make_response_promise<protocol::thread_session_response>();
  // After the reply, a client that joins is asked by the approvals waiting
  // (Codex re-sends pending requests on resume); none asks it before.
  if (joined) st.joining.push_back(client);
  auto offer = [self, joined, client] {
    if (!joined) return;
    auto& j = self->state.joining;
    j.erase(std::remove(j.begin(), j.end(), client), j.end());
    offer_waiting_approvals(self, client);
  };
  if (params.exclude_turns || st.meta.ephemeral) {
    rp.deliver(describe_session(self));
    offer();
    return rp;
  }
  // The session as it is now, with the history the load returns (every
  // record sent before it): both describe this moment.
  load_history(
      self,
      [rp, offer, session = describe_session(self), marks = marks_now(st)](
          stored_thread& stored) mutable {
        session.thread_.turns = std::move(stored.meta.turns);
        mark_turns(marks, session.thread_.turns);
        rp.deliver(std::move(session));
        offer();
      },
      [self, rp, offer](caf::error&) mutable {
        // Nothing stored yet (no turn so far): the thread has no history.
        rp.deliver(describe_session(self));
        offer();
      });
  return rp;
}

/// thread/read: the thread, with its stored turns if asked.
caf::result<protocol::thread_read_response> read_thread(self_ptr self, bool include_turns) {
  auto& st = self->state;
  auto rp = self->make_response_promise<protocol::thread_read_response>();
  if (!include_turns || st.meta.ephemeral) {
    rp.deliver(protocol::thread_read_response{st.meta});
    return rp;
  }
  load_history(
      self,
      [rp, t = st.meta, marks = marks_now(st)](stored_thread& stored) mutable {
        t.turns = std::move(stored.meta.turns);
        mark_turns(marks, t.turns);
        rp.deliver(protocol::thread_read_response{std::move(t)});
      },
      [self, rp](caf::error& err) mutable {
        // Nothing stored yet (no turn so far): the thread has no history.
        if (err.category() == caf::atom("parley")
            && static_cast<errc>(err.code()) == errc::invalid_request)
          rp.deliver(protocol::thread_read_response{self->state.meta});
        else
          rp.deliver(std::move(err));
      });
  return rp;
}

caf::result<atom::ok> rename_thread(self_ptr self, const protocol::thread_name_set_params& params) {
  auto& st = self->state;
  if (st.closing) return unloading_error(self);
  st.meta.name = params.name;
  emit_stored(self, thread_renamed_record{params.name},
              make_event(*st.svc, protocol::thread_name_updated{st.meta.id, params.name}));
  return atom::ok::value;
}

/// thread/unsubscribe: "unsubscribed" or "notSubscribed".
std::string unsubscribe(self_ptr self, const client_actor& client) {
  auto& subs = self->state.subscribers;
  auto i = std::find(subs.begin(), subs.end(), client);
  if (i == subs.end()) return "notSubscribed";
  subs.erase(i);
  forget_pressure(self, client);
  arm_idle_timer(self);
  return "unsubscribed";
}

/// turn/interrupt. An empty turn id (the TUI sends one at startup, before
/// any turn) means "whatever runs": answered even when nothing does.
caf::result<atom::ok> interrupt_turn(self_ptr self, const std::string& turn_id) {
  auto& st = self->state;
  if (turn_id.empty()) {
    interrupt_active(self);
    return atom::ok::value;
  }
  if (!st.active) return make_error(errc::invalid_request, "no active turn to interrupt");
  if (st.active->id != turn_id)
    return make_error(errc::invalid_request,
                      "expected active turn id " + turn_id + " but found " + st.active->id);
  interrupt_active(self);
  return atom::ok::value;
}

/// Unload: the active turn ends interrupted first; the reply comes when the
/// thread has closed.
caf::result<atom::ok> shut_down(self_ptr self) {
  auto& st = self->state;
  // Already unloading (idle, or a second archive): close() has run and
  // will not run again. Answered once what it still has queued has left.
  if (st.closing) {
    auto rp = self->make_response_promise<atom::ok>();
    post(self, [rp]() mutable { rp.deliver(atom::ok::value); });
    return rp;
  }
  auto rp = self->make_response_promise<atom::ok>();
  st.shutdown_waiters.push_back(rp);
  if (st.active)
    interrupt_active(self);  // close() follows when the turn has ended
  else
    close(self);
  return rp;
}

void on_idle_timer(self_ptr self, uint64_t generation) {
  auto& st = self->state;
  if (generation != st.idle_generation || !st.subscribers.empty() || st.closing) return;
  if (st.active) {
    if (can_park(st)) park(self);
    return;
  }
  PARLEY_INFO("conversation {} event=idle_unload", st.meta.id);
  close(self);
}

void on_client_gone(self_ptr self, const client_actor& client) {
  auto& subs = self->state.subscribers;
  subs.erase(std::remove(subs.begin(), subs.end(), client), subs.end());
  forget_pressure(self, client);
  auto& joining = self->state.joining;
  joining.erase(std::remove(joining.begin(), joining.end(), client), joining.end());
  arm_idle_timer(self);
}

// -- from the turn -----------------------------------------------------------

/// A turn's event: a completed item is stored before anyone sees it.
void on_turn_event(self_ptr self, notification_ptr& n) {
  if (auto* done = std::get_if<protocol::item_completed>(&n->body)) {
    // The user's own command is context no model produced: what the model
    // is told of it is derived from the item, whatever the model.
    auto* cmd = std::get_if<protocol::command_execution_item>(&done->item);
    bool user_shell = cmd && cmd->source == "userShell";
    bool derive = user_shell || !self->state.svc->model_keeps_context;
    auto& active = self->state.active;
    if (active && active->review && active->id == done->turn_id) {
      // A review's own work is the reviewer's: the thread's model is told
      // only its result and the review (whatever the model).
      derive = std::holds_alternative<protocol::exited_review_mode_item>(done->item)
               || std::holds_alternative<protocol::agent_message_item>(done->item);
    }
    emit_stored(self, item_record{done->turn_id, done->item, derive}, std::move(n));
  } else {
    emit(self, std::move(n));
  }
}

/// Several events of the active turn, in order. Those in a row that need
/// no store leave as one message per client, in their place in the outbox;
/// a completed item is stored first, as when it comes alone, and what
/// follows it waits for it there.
void on_turn_events(self_ptr self, notification_batch& batch) {
  notification_batch run;
  auto flush = [&] {
    if (run.size() == 1)
      emit(self, std::move(run.front()));
    else if (!run.empty())
      emit(self, std::move(run));
    run.clear();
  };
  for (auto& n : batch) {
    if (std::holds_alternative<protocol::item_completed>(n->body)) {
      flush();
      on_turn_event(self, n);
    } else {
      run.push_back(std::move(n));
    }
  }
  flush();
}

/// A phase of an action of the active turn: ok once it is stored.
caf::result<atom::ok> store_action(self_ptr self, action_record& r) {
  auto rp = self->make_response_promise<atom::ok>();
  auto item = r.item_id;
  auto asked = r.at == action_record::phase::asked;
  post_durable(self, std::move(r), [self, rp, item, asked](caf::error err) mutable {
    auto& st = self->state;
    if (!err && asked && !st.meta.ephemeral) {
      st.asked_durably.ensure().insert(item);
      arm_idle_timer(self);  // nobody subscribed: it may wait unloaded
    } else {
      if (st.asked_durably) st.asked_durably->erase(item);
    }
    if (err)
      rp.deliver(std::move(err));
    else
      rp.deliver(atom::ok::value);
  });
  return rp;
}

/// The active turn's compaction, stored in order with its items (before
/// the contextCompaction item that announces it).
void on_turn_compacted(self_ptr self, compacted_record& r) {
  auto& st = self->state;
  if (!st.active || r.turn_id != st.active->id) return;
  post_stored(self, std::move(r), [] {});
}

/// The active turn's model context, stored in order with its items.
void on_turn_context(self_ptr self, context_record& r) {
  auto& st = self->state;
  if (!st.active || r.turn_id != st.active->id || r.items.empty()) return;
  post_stored(self, std::move(r), [] {});
}

void on_turn_down(self_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  if (!st.active || dm.source != st.active->handle.address()) return;
  if (st.parked) {
    // Parked: its turn and approval left everything as stored.
    st.active.reset();
    st.approvals.reset();
    st.asked_durably.reset();
    return close(self);
  }
  // The turn died without reporting its end (a crash).
  protocol::turn_error e;
  e.message = "turn ended unexpectedly: " + caf::to_string(dm.reason);
  e.codex_error_info = "other";
  finalize_turn(self, turn_result{protocol::turn_status::failed, e, std::nullopt, std::nullopt});
}

}  // namespace

}  // namespace conversation_detail

conversation_settings settings_for(const protocol::thread& meta,
                                   const protocol::thread_overrides& overrides,
                                   const runtime_config& config) {
  conversation_settings s;
  s.cwd = overrides.cwd.value_or(meta.cwd);
  s.model = overrides.model.value_or(meta.model.value_or(config.model_id));
  s.policy = overrides.approval_policy_.value_or(protocol::approval_policy::on_request());
  s.sandbox = protocol::sandbox_policy::from_mode(
      overrides.sandbox.value_or(protocol::sandbox_mode::workspace_write));
  s.reviewer = overrides.approvals_reviewer.value_or("user");
  // The client's tools, as declared when the thread started: checked then,
  // so one that no longer decodes (a rollout edited by hand) is left out.
  if (meta.dynamic_tools.is_array()) {
    try {
      s.dynamic_tools = protocol::decode_dynamic_tools(meta.dynamic_tools);
    } catch (const protocol::decode_error& e) {
      PARLEY_WARN("conversation {} event=dynamic_tools_unreadable error=\"{}\"", meta.id, e.what());
    }
  }
  return s;
}

namespace conversation_detail {
namespace {

/// The conversation this thread runs now (set by conversation::resume,
/// which is where CAF runs an actor's handlers), so that the shared
/// behavior's handlers, which capture nothing, find theirs.
thread_local conversation* running_conversation = nullptr;

self_ptr this_conversation() { return running_conversation; }

/// One behavior for every conversation: its handlers capture nothing.
conversation_actor::behavior_type shared_conversation_behavior() {
  return {
      // -- from connections (through the thread manager) --
      [](atom::open, client_actor client) {
        auto self = this_conversation();
        return open_thread(self, std::move(client));
      },
      [](atom::resume, client_actor client, const protocol::thread_resume_params& params) {
        auto self = this_conversation();
        return resume_thread(self, std::move(client), params);
      },
      [](atom::resume, client_actor client, const protocol::thread_resume_params& params,
         resumed_turn& pending) {
        auto self = this_conversation();
        // In one step: the session the reply describes has the turn, and
        // the turn's events, which reach this actor after this step, find
        // the client subscribed.
        restore_turn(self, pending);
        return resume_thread(self, std::move(client), params);
      },
      [](atom::unsub, const client_actor& client) {
        auto self = this_conversation();
        return unsubscribe(self, client);
      },
      [](atom::rename, const protocol::thread_name_set_params& params) {
        auto self = this_conversation();
        return rename_thread(self, params);
      },
      [](atom::edit, thread_edit& edit) {
        auto self = this_conversation();
        return edit_thread(self, edit);
      },
      [](atom::idle, uint64_t generation) {
        auto self = this_conversation();
        on_idle_timer(self, generation);
      },
      [](atom::turn_start, protocol::turn_start_params& params,
         client_actor client) -> caf::result<protocol::turn_start_response> {
        auto self = this_conversation();
        if (self->state.closing) return unloading_error(self);
        if (self->state.reverting) return reverting_error(self);
        return start_turn(self, params, std::move(client));
      },
      [](atom::shell, const protocol::thread_shell_command_params& params,
         client_actor client) -> caf::result<atom::ok> {
        auto self = this_conversation();
        if (self->state.closing) return unloading_error(self);
        if (self->state.reverting) return reverting_error(self);
        return start_shell_turn(self, params, std::move(client));
      },
      [](atom::compact, client_actor client) -> caf::result<atom::ok> {
        auto self = this_conversation();
        if (self->state.closing) return unloading_error(self);
        if (self->state.reverting) return reverting_error(self);
        return start_compact_turn(self, std::move(client));
      },
      [](atom::review, protocol::review_start_params& params,
         client_actor client) -> caf::result<protocol::review_start_response> {
        auto self = this_conversation();
        if (self->state.closing) return unloading_error(self);
        return start_review_turn(self, params, std::move(client));
      },
      [](atom::interrupt, const std::string& turn_id) {
        auto self = this_conversation();
        return interrupt_turn(self, turn_id);
      },
      [](atom::steer, protocol::turn_steer_params& params,
         const client_actor&) -> caf::result<protocol::turn_steer_response> {
        auto self = this_conversation();
        if (self->state.closing) return unloading_error(self);
        return steer_turn(self, params);
      },
      [](atom::read, bool include_turns) {
        auto self = this_conversation();
        return read_thread(self, include_turns);
      },
      [](atom::gone, const client_actor& client) {
        auto self = this_conversation();
        on_client_gone(self, client);
      },
      [](atom::pressure, const client_actor& client, bool on) {
        auto self = this_conversation();
        on_client_pressure(self, client, on);
      },
      [](atom::shutdown) {
        auto self = this_conversation();
        return shut_down(self);
      },
      // -- from the turn --
      [](atom::event, notification_ptr& n) {
        auto self = this_conversation();
        on_turn_event(self, n);
      },
      [](atom::event, notification_batch& batch) {
        auto self = this_conversation();
        on_turn_events(self, batch);
      },
      [](atom::grant, const std::string& command) {
        auto self = this_conversation();
        self->state.grants.ensure().commands.insert(command);
      },
      [](atom::grant, const std::vector<std::string>& prefix) {
        auto self = this_conversation();
        self->state.grants.ensure().prefixes.push_back(prefix);
      },
      [](atom::grant, const path_grant& g) {
        auto self = this_conversation();
        self->state.grants.ensure().paths.insert(g.paths.begin(), g.paths.end());
      },
      [](atom::grant, const sandbox_grant& g) {
        auto self = this_conversation();
        self->state.granted.ensure().merge(g);
      },
      [](atom::grant, const mcp_tool_grant& g) {
        auto self = this_conversation();
        self->state.grants.ensure().mcp_tools.insert(mcp_tool_key(g.server, g.tool));
      },
      [](atom::append, context_record& r) {
        auto self = this_conversation();
        on_turn_context(self, r);
      },
      [](atom::append, compacted_record& r) {
        auto self = this_conversation();
        on_turn_compacted(self, r);
      },
      [](atom::append, action_record& r) {
        auto self = this_conversation();
        return store_action(self, r);
      },
      [](atom::restore, resumed_turn& r) {
        auto self = this_conversation();
        restore_turn(self, r);
      },
      [](atom::turn_done, turn_result& result) {
        auto self = this_conversation();
        finalize_turn(self, std::move(result));
      },
      // -- from the turn's approvals --
      [](atom::awaiting, const approval_ref& ref, const approval_actor& approval) {
        auto self = this_conversation();
        mark_waiting(self, ref, approval);
      },
      [](atom::ask, const approval_ref& ref) {
        auto self = this_conversation();
        return clients_to_ask(self, ref);
      },
      [](atom::settled, const approval_ref& ref) {
        auto self = this_conversation();
        settle_ask(self, ref);
      },
      // -- from an MCP server's actor --
      [](atom::elicit, approval_ask& ask) {
        auto self = this_conversation();
        return start_elicitation(self, ask);
      },
  };
}

}  // namespace

}  // namespace conversation_detail

conversation::conversation(caf::actor_config& cfg, std::shared_ptr<const runtime_services> svc,
                           protocol::thread meta,
                           conversation_settings settings, std::vector<context_item> fork_context)
    : super(cfg) {
  auto& st = state;
  st.svc = std::move(svc);
  if (!fork_context.empty()) st.fork_context = std::move(fork_context);
  if (!meta.turns.empty()) st.fork_turns = meta.turns;
  st.meta = std::move(meta);
  st.settings = std::move(settings);
}

conversation::behavior_type conversation::make_behavior() {
  using namespace conversation_detail;
  self_ptr self = this;
  install_default_handlers(self, "conversation");
  state.live = count_live(state.svc->telemetry, &live_counters::conversations);
  set_down_handler([self](caf::down_msg& dm) { on_turn_down(self, dm); });
  // Built once (thread-safe static), shared: a copy holds the same cases.
  static const behavior_type shared = shared_conversation_behavior();
  return shared;
}

caf::resumable::resume_result conversation::resume(caf::execution_unit* ctx,
                                                   size_t max_throughput) {
  // Restored after: CAF does not nest one actor's run in another's, but
  // this keeps a nested one (should it come) from naming the wrong actor.
  auto* outer = conversation_detail::running_conversation;
  conversation_detail::running_conversation = this;
  auto result = super::resume(ctx, max_throughput);
  conversation_detail::running_conversation = outer;
  return result;
}

}  // namespace parley