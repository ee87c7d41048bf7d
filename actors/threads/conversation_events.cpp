// The conversation as its thread's single sequencer: the outbox every event
// leaves through, the thread's status, its subscribers, and unloading.

#include <algorithm>

#include "actors/core/log.hpp"
#include "actors/threads/conversation_detail.hpp"

namespace parley::conversation_detail {

namespace {

constexpr auto store_timeout = std::chrono::seconds(60);

/// The events one run of a conversation's outbox broadcasts (issue 23):
/// those that leave in a row go to each subscriber as one message, in their
/// order, sent when the run ends or before anything else the run does
/// (send_gathered). A run is synchronous, inside one of the conversation's
/// handlers, so one buffer per worker thread serves every conversation and
/// none of them holds a byte for it while idle.
struct gathered_events {
  const conversation_state* owner = nullptr;  // the conversation whose run gathers
  int depth = 0;                              // runs started inside a run
  notification_batch events;
  std::vector<client_actor> to;  // the subscribers when the first was gathered
};

thread_local gathered_events gathered;

void send_batch(self_ptr self, const std::vector<client_actor>& to, notification_batch batch) {
  if (to.empty() || batch.empty()) return;
  if (batch.size() == 1) {
    for (const auto& client : to) self->send(client, atom::event::value, batch.front());
    return;
  }
  for (size_t i = 0; i + 1 < to.size(); ++i) self->send(to[i], atom::event::value, batch);
  self->send(to.back(), atom::event::value, std::move(batch));
}

bool gathering_for(const self_ptr& self) {
  return gathered.depth > 0 && gathered.owner == &self->state;
}

/// Gathers what one outbox run broadcasts for as long as it lives (nested
/// runs join the outer one).
class gathering {
 public:
  explicit gathering(self_ptr self) : self_(self) {
    if (gathered.depth > 0 && gathered.owner != &self->state) {
      own_ = false;  // another conversation's run (never nested so; kept exact anyway)
      return;
    }
    gathered.owner = &self->state;
    ++gathered.depth;
  }
  ~gathering() {
    if (!own_) return;
    if (gathered.depth == 1) send_gathered(self_);  // the outer run ends: all of it leaves
    if (--gathered.depth == 0) gathered.owner = nullptr;
  }
  gathering(const gathering&) = delete;
  gathering& operator=(const gathering&) = delete;

 private:
  self_ptr self_;
  bool own_ = true;
};

/// An action that does more than broadcast: what was gathered before it
/// leaves first, so a reply or a request it sends never overtakes an event.
event_outbox::action in_order(self_ptr self, event_outbox::action run) {
  return [self, run = std::move(run)] {
    send_gathered(self);
    run();
  };
}

void post_events(self_ptr self, event_outbox::action broadcasts) {
  {
    gathering scope{self};
    self->state.outbox.post(std::move(broadcasts));
  }  // what the run gathered has left before the actor may quit
  quit_if_done(self);
}

}  // namespace

void send_gathered(self_ptr self) {
  if (!gathering_for(self) || gathered.events.empty()) return;
  notification_batch batch;
  batch.swap(gathered.events);
  auto to = std::move(gathered.to);
  gathered.to.clear();
  send_batch(self, to, std::move(batch));
}

void broadcast(self_ptr self, const notification_ptr& n) {
  auto& subs = self->state.subscribers;
  if (!gathering_for(self)) {
    for (auto& client : subs) self->send(client, atom::event::value, n);
    return;
  }
  // Gathered for the subscribers it was gathered for: one that came or
  // left in between gets what it would have got.
  if (!gathered.events.empty() && gathered.to != subs) send_gathered(self);
  if (subs.empty()) return;
  if (gathered.events.empty()) gathered.to = subs;
  gathered.events.push_back(n);
}

void broadcast(self_ptr self, notification_batch batch) {
  if (!gathering_for(self)) return send_batch(self, self->state.subscribers, std::move(batch));
  for (auto& n : batch) broadcast(self, n);
}

void quit_if_done(self_ptr self) {
  auto& st = self->state;
  if (!st.closing || !st.outbox.empty() || st.active || st.awaiting_store != 0) return;
  // A parked thread says so to its manager (which keeps its deadline).
  if (st.parked)
    self->quit(make_error(errc::unloading, "parked: its turn waits on a person"));
  else
    self->quit();
}

bool can_park(const conversation_state& st) {
  if (!st.active || st.active->waiting.empty() || !st.active->waiting_input.empty()
      || !st.subscribers.empty() || st.meta.ephemeral)
    return false;
  for (const auto& item : st.active->waiting)
    if (!st.asked_durably || !st.asked_durably->count(item)) return false;
  return true;
}

void park(self_ptr self) {
  auto& st = self->state;
  if (st.parked || !st.active) return;
  PARLEY_INFO("conversation {} event=parked turn={} waiting={}", st.meta.id, st.active->id,
              st.active->waiting.size());
  st.parked = true;
  self->send_exit(st.active->handle, make_error(errc::unloading, "parked"));
}

void post(self_ptr self, std::function<void()> deliver) {
  post_events(self, in_order(self, std::move(deliver)));
}

void post_stored(self_ptr self, store_record record, std::function<void()> deliver) {
  auto& st = self->state;
  if (st.meta.ephemeral) return post_events(self, std::move(deliver));
  // What was not stored is not reported: the event is dropped and the turn
  // that wrote it stops, to end failed with the store's reason.
  auto seq = st.outbox.post_held(std::move(deliver));
  // No timeout: every store answers an append itself or through a linked I/O
  // actor (a record waiting for a full disk waits, capped, in the store), so
  // a failure bounces back as an error.
  self->request(st.svc->store, caf::infinite, atom::append::value, st.meta.id, std::move(record))
      .then(
          [self, seq](atom::ok) {
            {
              gathering scope{self};
              self->state.outbox.release(seq);
            }
            quit_if_done(self);
          },
          [self, seq, turn = st.active ? st.active->id : std::string{}](caf::error& err) {
            PARLEY_ERROR("conversation {} event=store_append_failed error={}",
                         self->state.meta.id, message_of(err));
            fail_turn_on_store(self, turn, err);
            {
              gathering scope{self};
              self->state.outbox.drop(seq);
            }
            quit_if_done(self);
          });
}

void fail_turn_on_store(self_ptr self, const std::string& turn_id, const caf::error& err) {
  auto& st = self->state;
  // Only the turn that wrote the record: one that ended since has its end
  // refused after it (the store takes nothing after a hole), the next one
  // has nothing to do with it.
  if (!st.active || st.active->id != turn_id || st.active->store_error) return;
  st.active->store_error = "the store could not keep this turn: " + message_of(err);
  interrupt_active(self);
}

void post_durable(self_ptr self, store_record record, std::function<void(caf::error)> done) {
  auto& st = self->state;
  if (st.meta.ephemeral) return post(self, [done] { done(caf::error{}); });
  auto result = std::make_shared<caf::error>();
  auto seq = st.outbox.post_held(in_order(self, [done, result] { done(*result); }));
  auto release = [self, seq] {
    {
      gathering scope{self};
      self->state.outbox.release(seq);
    }
    quit_if_done(self);
  };
  self->request(st.svc->store, caf::infinite, atom::append::value, st.meta.id, std::move(record))
      .then([release](atom::ok) { release(); },
            [self, release, result](caf::error& err) {
              PARLEY_WARN("conversation {} event=not_stored error={}", self->state.meta.id,
                          message_of(err));
              *result = std::move(err);
              release();
            });
}

void emit(self_ptr self, notification_ptr n) {
  post_events(self, [self, n = std::move(n)] { broadcast(self, n); });
}

void emit(self_ptr self, notification_batch batch) {
  post_events(self, [self, batch = std::move(batch)]() mutable { broadcast(self, std::move(batch)); });
}

void emit_stored(self_ptr self, store_record record, notification_ptr n) {
  post_stored(self, std::move(record), [self, n = std::move(n)] { broadcast(self, n); });
}

void update_status(self_ptr self) {
  auto& st = self->state;
  auto status = st.active ? protocol::thread_status::active(!st.active->waiting.empty())
                          : protocol::thread_status::idle();
  if (st.active) status.waiting_on_user_input = !st.active->waiting_input.empty();
  if (status == st.meta.status) return;
  st.meta.status = status;
  emit(self, make_event(*st.svc, protocol::thread_status_changed{st.meta.id, status}));
}

void apply_pressure(self_ptr self) {
  auto& st = self->state;
  if (!st.active) return;
  bool hold = st.pressing && !st.pressing->empty();
  if (st.active->held == hold) return;
  st.active->held = hold;
  PARLEY_DEBUG("conversation {} event=pressure turn={} hold={}", st.meta.id, st.active->id, hold);
  // High priority, like every hop of the signal: its turn's mailbox may hold
  // what the stream sent meanwhile.
  self->send<caf::message_priority::high>(st.active->handle, atom::pressure::value, hold);
}

void on_client_pressure(self_ptr self, const client_actor& client, bool on) {
  auto& st = self->state;
  auto& p = st.pressing.ensure();
  auto i = std::find(p.begin(), p.end(), client);
  if (on && i == p.end()) {
    // Only a subscriber holds the thread: one that left is told nothing more.
    if (std::find(st.subscribers.begin(), st.subscribers.end(), client) == st.subscribers.end())
      return;
    p.push_back(client);
  } else if (!on && i != p.end()) {
    p.erase(i);
  }
  apply_pressure(self);
}

void forget_pressure(self_ptr self, const client_actor& client) {
  if (auto& p = self->state.pressing) p->erase(std::remove(p->begin(), p->end(), client), p->end());
  apply_pressure(self);
}

bool subscribe(self_ptr self, const client_actor& client) {
  auto& subs = self->state.subscribers;
  if (std::find(subs.begin(), subs.end(), client) != subs.end()) return false;
  subs.push_back(client);
  return true;
}

void load_history(self_ptr self, std::function<void(stored_thread&)> then,
                  std::function<void(caf::error&)> fail) {
  auto& st = self->state;
  ++st.awaiting_store;
  auto done = [self] {
    --self->state.awaiting_store;
    quit_if_done(self);
  };
  self->request(st.svc->store, store_timeout, atom::load::value, st.meta.id)
      .then(
          [then, done](stored_thread& stored) {
            then(stored);
            done();
          },
          [fail, done](caf::error& err) {
            fail(err);
            done();
          });
}

caf::error unloading_error(self_ptr self) {
  return make_error(errc::unloading,
                    "thread " + self->state.meta.id + " is unloading; resume it to load it again");
}

void arm_idle_timer(self_ptr self) {
  auto& st = self->state;
  if ((st.active && !can_park(st)) || !st.subscribers.empty() || st.closing) return;
  self->delayed_send(self, st.svc->config->idle_unload, atom::idle::value, ++st.idle_generation);
}

void close(self_ptr self) {
  auto& st = self->state;
  if (st.closing) return;
  st.meta.status = protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};
  emit(self, make_event(*st.svc, protocol::thread_status_changed{st.meta.id, st.meta.status}));
  emit(self, make_event(*st.svc, protocol::thread_closed{st.meta.id}));
  // Whoever unloads it (thread/delete, thread/archive) hears so only once
  // every event before it has left (the turn's end, held until stored, and
  // thread/closed): what it tells the clients next comes after them.
  post(self, [self, waiters = std::move(st.shutdown_waiters)]() mutable {
    for (auto& rp : waiters) rp.deliver(atom::ok::value);
  });
  st.shutdown_waiters.clear();
  st.closing = true;
  quit_if_done(self);
}

}  // namespace parley::conversation_detail
