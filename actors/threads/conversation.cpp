#include "actors/threads/conversation.hpp"

#include <algorithm>

#include "actors/core/handlers.hpp"
#include "actors/threads/turn.hpp"
#include "protocol/ids.hpp"

namespace parley {

namespace {

using self_ptr = conversation_actor::stateful_pointer<conversation_state>;

constexpr auto store_timeout = std::chrono::seconds(60);
constexpr auto client_margin = std::chrono::seconds(30);

// -- outbox ------------------------------------------------------------------

void flush(self_ptr self) {
  auto& st = self->state;
  while (!st.outbox.empty() && st.outbox.front().ready) {
    auto deliver = std::move(st.outbox.front().deliver);
    st.outbox.pop_front();
    deliver();
  }
  if (st.closing && st.outbox.empty() && !st.active && st.awaiting_store == 0) self->quit();
}

/// Loads this thread's stored history for a reply, keeping the actor alive
/// until `then` or `fail` has delivered it.
template <class Then, class Fail>
void load_history(self_ptr self, Then then, Fail fail) {
  auto& st = self->state;
  ++st.awaiting_store;
  auto done = [self] {
    --self->state.awaiting_store;
    flush(self);
  };
  self->request(st.svc.store, store_timeout, atom::load::value, st.meta.id)
      .then(
          [then, done](stored_thread& stored) mutable {
            then(stored);
            done();
          },
          [fail, done](caf::error& err) mutable {
            fail(err);
            done();
          });
}

/// The answer to a request that reaches a thread which is unloading.
caf::error unloading_error(self_ptr self) {
  return make_error(errc::unloading,
                    "thread " + self->state.meta.id + " is unloading; resume it to load it again");
}

/// Unloads the thread after `idle_unload` without subscribers or turns.
void arm_idle_timer(self_ptr self) {
  auto& st = self->state;
  if (st.active || !st.subscribers.empty() || st.closing) return;
  self->delayed_send(self, st.svc.config->idle_unload, atom::idle::value, ++st.idle_generation);
}

/// Queues an action behind everything already queued.
void post(self_ptr self, std::function<void()> deliver) {
  auto& st = self->state;
  st.outbox.push_back({st.next_seq++, true, std::move(deliver)});
  flush(self);
}

/// Queues an action that runs once `record` is stored (ephemeral threads
/// store nothing).
void post_stored(self_ptr self, store_record record, std::function<void()> deliver) {
  auto& st = self->state;
  if (st.meta.ephemeral) {
    post(self, std::move(deliver));
    return;
  }
  auto seq = st.next_seq++;
  st.outbox.push_back({seq, false, std::move(deliver)});
  auto mark_ready = [self, seq] {
    for (auto& e : self->state.outbox)
      if (e.seq == seq) e.ready = true;
    flush(self);
  };
  // No timeout: every store answers an append itself or through a linked I/O
  // actor that replies at once, so a failure bounces back as an error; a
  // timed request costs two wakeups of CAF's clock thread, on every record.
  self->request(st.svc.store, caf::infinite, atom::append::value, st.meta.id, std::move(record))
      .then([mark_ready](atom::ok) { mark_ready(); },
            [self, mark_ready](caf::error& err) {
              PARLEY_ERROR("conversation {} event=store_append_failed error={}",
                           self->state.meta.id, caf::to_string(err));
              mark_ready();
            });
}

void broadcast(self_ptr self, const notification_ptr& n) {
  for (auto& client : self->state.subscribers) self->send(client, atom::event::value, n);
}

void emit(self_ptr self, notification_ptr n) {
  post(self, [self, n = std::move(n)] { broadcast(self, n); });
}

void emit_stored(self_ptr self, store_record record, notification_ptr n) {
  post_stored(self, std::move(record), [self, n = std::move(n)] { broadcast(self, n); });
}

void close(self_ptr self);

// -- status ------------------------------------------------------------------

void update_status(self_ptr self) {
  auto& st = self->state;
  auto status = st.active ? protocol::thread_status::active(!st.active->waiting.empty())
                          : protocol::thread_status::idle();
  if (status == st.meta.status) return;
  st.meta.status = status;
  emit(self, make_event(self->state.svc, protocol::thread_status_changed{st.meta.id, status}));
}

// -- asks --------------------------------------------------------------------

std::optional<client_actor> pick_client(self_ptr self) {
  auto& st = self->state;
  if (st.subscribers.empty()) return std::nullopt;
  if (st.active) {
    auto owner = st.active->owner;
    if (std::find(st.subscribers.begin(), st.subscribers.end(), owner) != st.subscribers.end())
      return owner;
  }
  return st.subscribers.front();
}

/// Relays an approval's ask to the client that decides it, behind every
/// event already queued; the client's answer goes to the approval.
caf::result<protocol::approval_decision> relay_ask(self_ptr self, const approval_ask& ask) {
  auto& st = self->state;
  auto rp = self->make_response_promise<protocol::approval_decision>();
  if (!st.active || st.active->id != ask.turn_id()) {
    rp.deliver(make_error(errc::withdrawn, "the turn of this approval is over"));
    return rp;
  }
  auto client = pick_client(self);
  if (!client) {
    rp.deliver(make_error(errc::transport_closed, "no client can decide"));
    return rp;
  }
  relayed_ask relay;
  relay.client = *client;
  relay.live = count_live(st.svc.telemetry, &live_counters::pending_asks);
  st.asks.emplace(ask.key, std::move(relay));
  post(self, [self, ask, rp]() mutable {
    auto i = self->state.asks.find(ask.key);
    if (i == self->state.asks.end()) {  // settled while queued: never shown
      rp.deliver(make_error(errc::withdrawn, "approval settled"));
      return;
    }
    i->second.sent = true;
    rp.delegate(i->second.client, atom::ask::value, ask);
  });
  return rp;
}

/// An approval has its outcome: its item no longer waits, and a prompt
/// still open at the client is void.
void settle_ask(self_ptr self, const approval_ref& ref, bool prompt_open) {
  auto& st = self->state;
  if (auto i = st.asks.find(ref.key); i != st.asks.end()) {
    if (prompt_open && i->second.sent) {
      auto client = i->second.client;
      auto key = ref.key;
      post(self, [self, client, key] { self->send(client, atom::withdraw::value, key); });
    }
    st.asks.erase(i);
  }
  if (st.active && st.active->id == ref.turn_id) st.active->waiting.erase(ref.item_id);
  update_status(self);
}

// -- turns -------------------------------------------------------------------

protocol::turn describe_active(const active_turn& t, bool with_start) {
  protocol::turn out;
  out.id = t.id;
  out.status = protocol::turn_status::in_progress;
  if (with_start) out.started_at = t.started_at;
  return out;
}

void finalize_turn(self_ptr self, turn_result result) {
  auto& st = self->state;
  if (!st.active) return;
  auto now_ms = protocol::unix_ms();
  protocol::turn done;
  done.id = st.active->id;
  done.status = result.status;
  done.error = std::move(result.error);
  done.started_at = st.active->started_at;
  done.completed_at = now_ms / 1000;
  done.duration_ms = now_ms - st.active->started_ms;
  st.active.reset();
  st.meta.updated_at = now_ms / 1000;
  update_status(self);
  emit_stored(self, turn_completed_record{done},
              make_event(self->state.svc, protocol::turn_completed{st.meta.id, done}));
  if (!st.shutdown_waiters.empty()) {
    close(self);
    return;
  }
  arm_idle_timer(self);
}

/// The thread unloads: subscribers learn it (status notLoaded, thread/closed),
/// waiters get their ok, and the actor quits once the outbox is drained.
void close(self_ptr self) {
  auto& st = self->state;
  if (st.closing) return;
  st.meta.status = protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};
  emit(self,
       make_event(self->state.svc, protocol::thread_status_changed{st.meta.id, st.meta.status}));
  emit(self, make_event(self->state.svc, protocol::thread_closed{st.meta.id}));
  for (auto& rp : st.shutdown_waiters) rp.deliver(atom::ok::value);
  st.shutdown_waiters.clear();
  st.closing = true;
  flush(self);
}

void interrupt_active(self_ptr self) {
  auto& st = self->state;
  if (!st.active || st.active->interrupt_sent) return;
  st.active->interrupt_sent = true;
  self->send_exit(st.active->handle, make_error(errc::interrupted, "turn interrupted"));
}

/// A stored turn without an end record reads back as interrupted; the one
/// this conversation is running is in progress.
void mark_active(self_ptr self, std::vector<protocol::turn>& turns) {
  auto& st = self->state;
  if (!st.active) return;
  for (auto& t : turns)
    if (t.id == st.active->id) t.status = protocol::turn_status::in_progress;
}

void subscribe(self_ptr self, const client_actor& client) {
  auto& subs = self->state.subscribers;
  if (std::find(subs.begin(), subs.end(), client) == subs.end()) subs.push_back(client);
}

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

/// Where a turn's patches may write: anywhere with full access, otherwise
/// the cwd and the sandbox's extra writable roots.
std::vector<std::string> writable_roots_of(const conversation_settings& s) {
  using kind = protocol::sandbox_policy::kind;
  if (s.sandbox.type == kind::danger_full_access || s.sandbox.type == kind::external_sandbox)
    return {"/"};
  std::vector<std::string> roots{s.cwd};
  roots.insert(roots.end(), s.sandbox.writable_roots.begin(), s.sandbox.writable_roots.end());
  return roots;
}

caf::result<protocol::turn_start_response> start_turn(self_ptr self,
                                                      protocol::turn_start_params& params,
                                                      client_actor client) {
  auto& st = self->state;
  subscribe(self, client);
  if (st.active) {
    // Codex steers the input into the active turn; parley's scripted turns
    // cannot take more input, so the caller gets the active turn's id.
    return protocol::turn_start_response{describe_active(*st.active, false)};
  }
  if (params.cwd) st.settings.cwd = *params.cwd;
  if (params.approval_policy_) st.settings.policy = *params.approval_policy_;
  if (params.sandbox_policy_) st.settings.sandbox = *params.sandbox_policy_;
  if (params.model) st.settings.model = *params.model;
  st.meta.cwd = st.settings.cwd;
  st.meta.model = st.settings.model;

  auto now_ms = protocol::unix_ms();
  active_turn t;
  t.id = protocol::new_uuid_v7();
  t.started_at = now_ms / 1000;
  t.started_ms = now_ms;
  t.owner = client;
  auto text = protocol::joined_text(params.input);
  if (st.meta.preview.empty()) st.meta.preview = text;
  st.meta.updated_at = t.started_at;

  turn_settings ts;
  ts.thread_id = st.meta.id;
  ts.turn_id = t.id;
  ts.cwd = st.settings.cwd;
  ts.policy = st.settings.policy;
  ts.grants = st.grants;
  ts.writable_roots = writable_roots_of(st.settings);
  ts.user_text = text;
  t.handle = self->spawn<caf::monitored>(turn, caf::actor_cast<conversation_actor>(self), st.svc,
                                         std::move(ts));
  auto turn_id = t.id;
  st.active = std::move(t);

  auto rp = self->make_response_promise<protocol::turn_start_response>();
  rp.deliver(protocol::turn_start_response{describe_active(*st.active, false)});

  update_status(self);
  emit_stored(self, turn_started_record{turn_id, st.active->started_at},
              make_event(self->state.svc,
                         protocol::turn_started{st.meta.id, describe_active(*st.active, true)}));
  protocol::user_message_item msg;
  msg.id = protocol::new_uuid_v7();
  msg.content = std::move(params.input);
  msg.client_id = params.client_user_message_id;
  emit(self, make_event(self->state.svc, protocol::item_started{st.meta.id, turn_id, msg, now_ms}));
  emit_stored(
      self, item_record{turn_id, msg},
      make_event(self->state.svc, protocol::item_completed{st.meta.id, turn_id, msg, now_ms}));
  return rp;
}

}  // namespace

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
  return s;
}

conversation_actor::behavior_type conversation(
    conversation_actor::stateful_pointer<conversation_state> self, runtime_services svc,
    protocol::thread meta, conversation_settings settings) {
  install_default_handlers(self, "conversation");
  self->state.svc = std::move(svc);
  self->state.live = count_live(self->state.svc.telemetry, &live_counters::conversations);
  self->state.fork_turns = meta.turns;
  self->state.meta = std::move(meta);
  self->state.settings = std::move(settings);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (st.active && dm.source == st.active->handle.address()) {
      // The turn died without reporting its end (a crash).
      protocol::turn_error e;
      e.message = "turn ended unexpectedly: " + caf::to_string(dm.reason);
      e.codex_error_info = "other";
      finalize_turn(self, turn_result{protocol::turn_status::failed, e});
    }
  });
  return {
      // -- from connections -------------------------------------------------
      [self](atom::open, client_actor client) -> caf::result<protocol::thread_session_response> {
        auto& st = self->state;
        if (st.closing) return unloading_error(self);
        subscribe(self, client);
        auto rp = self->make_response_promise<protocol::thread_session_response>();
        auto session = describe_session(self);
        session.thread_.turns = std::move(st.fork_turns);  // a fork's copied history
        st.fork_turns.clear();
        rp.deliver(std::move(session));
        auto created = st.meta;
        created.turns = std::move(st.meta.turns);  // stored with the thread, not kept here
        st.meta.turns.clear();
        emit_stored(self, thread_created_record{std::move(created)},
                    make_event(self->state.svc, protocol::thread_started{st.meta}));
        return rp;
      },
      [self](atom::resume, client_actor client, const protocol::thread_resume_params& params)
          -> caf::result<protocol::thread_session_response> {
        auto& st = self->state;
        if (st.closing) return unloading_error(self);
        subscribe(self, client);
        const auto& o = params.overrides;
        if (o.cwd) st.meta.cwd = st.settings.cwd = *o.cwd;
        if (o.model) st.meta.model = st.settings.model = *o.model;
        if (o.approval_policy_) st.settings.policy = *o.approval_policy_;
        if (o.sandbox) st.settings.sandbox = protocol::sandbox_policy::from_mode(*o.sandbox);
        if (o.approvals_reviewer) st.settings.reviewer = *o.approvals_reviewer;
        auto rp = self->make_response_promise<protocol::thread_session_response>();
        if (params.exclude_turns || st.meta.ephemeral) {
          rp.deliver(describe_session(self));
          return rp;
        }
        load_history(
            self,
            [self, rp](stored_thread& stored) mutable {
              auto session = describe_session(self);
              session.thread_.turns = std::move(stored.meta.turns);
              mark_active(self, session.thread_.turns);
              rp.deliver(std::move(session));
            },
            [self, rp](caf::error&) mutable {
              // Nothing stored yet (no turn so far): the thread has no history.
              rp.deliver(describe_session(self));
            });
        return rp;
      },
      [self](atom::unsub, const client_actor& client) -> std::string {
        auto& subs = self->state.subscribers;
        auto i = std::find(subs.begin(), subs.end(), client);
        if (i == subs.end()) return "notSubscribed";
        subs.erase(i);
        arm_idle_timer(self);
        return "unsubscribed";
      },
      [self](atom::rename,
             const protocol::thread_name_set_params& params) -> caf::result<atom::ok> {
        auto& st = self->state;
        if (st.closing) return unloading_error(self);
        st.meta.name = params.name;
        emit_stored(
            self, thread_renamed_record{params.name},
            make_event(self->state.svc, protocol::thread_name_updated{st.meta.id, params.name}));
        return atom::ok::value;
      },
      [self](atom::idle, uint64_t generation) {
        auto& st = self->state;
        if (generation != st.idle_generation || st.active || !st.subscribers.empty()) return;
        PARLEY_INFO("conversation {} event=idle_unload", st.meta.id);
        close(self);
      },
      [self](atom::turn_start, protocol::turn_start_params& params,
             client_actor client) -> caf::result<protocol::turn_start_response> {
        if (self->state.closing) return unloading_error(self);
        return start_turn(self, params, std::move(client));
      },
      [self](atom::interrupt, const std::string& turn_id) -> caf::result<atom::ok> {
        auto& st = self->state;
        if (!st.active) return make_error(errc::invalid_request, "no active turn to interrupt");
        if (st.active->id != turn_id)
          return make_error(errc::invalid_request,
                            "expected active turn id " + turn_id + " but found " + st.active->id);
        interrupt_active(self);
        return atom::ok::value;
      },
      [self](atom::read, bool include_turns) -> caf::result<protocol::thread_read_response> {
        auto& st = self->state;
        auto rp = self->make_response_promise<protocol::thread_read_response>();
        if (!include_turns || st.meta.ephemeral) {
          rp.deliver(protocol::thread_read_response{st.meta});
          return rp;
        }
        load_history(
            self,
            [self, rp](stored_thread& stored) mutable {
              auto t = self->state.meta;
              t.turns = std::move(stored.meta.turns);
              mark_active(self, t.turns);
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
      },
      [self](atom::gone, const client_actor& client) {
        auto& subs = self->state.subscribers;
        subs.erase(std::remove(subs.begin(), subs.end(), client), subs.end());
        arm_idle_timer(self);
      },
      [self](atom::shutdown) -> caf::result<atom::ok> {
        auto& st = self->state;
        // Already unloading (idle, or a second archive): close() has run and
        // will not run again, so a waiter added now would never be answered.
        if (st.closing) return atom::ok::value;
        auto rp = self->make_response_promise<atom::ok>();
        st.shutdown_waiters.push_back(rp);
        if (st.active)
          interrupt_active(self);  // close() follows when the turn has ended
        else
          close(self);
        return rp;
      },
      // -- from the turn and its approvals ------------------------------------
      [self](atom::event, notification_ptr& n) {
        if (auto* done = std::get_if<protocol::item_completed>(&n->body))
          emit_stored(self, item_record{done->turn_id, done->item}, std::move(n));
        else
          emit(self, std::move(n));
      },
      [self](atom::awaiting, const approval_ref& ref) {
        auto& st = self->state;
        if (!st.active || st.active->id != ref.turn_id) return;
        st.active->waiting.insert(ref.item_id);
        update_status(self);
      },
      [self](atom::ask, const approval_ask& ask) { return relay_ask(self, ask); },
      [self](atom::settled, const approval_ref& ref, bool prompt_open) {
        settle_ask(self, ref, prompt_open);
      },
      [self](atom::grant, const std::string& command) {
        self->state.grants.commands.insert(command);
      },
      [self](atom::grant, const std::vector<std::string>& prefix) {
        self->state.grants.prefixes.push_back(prefix);
      },
      [self](atom::grant, const path_grant& g) {
        self->state.grants.paths.insert(g.paths.begin(), g.paths.end());
      },
      [self](atom::turn_done, turn_result& result) { finalize_turn(self, std::move(result)); },
  };
}

}  // namespace parley
