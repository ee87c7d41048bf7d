// The conversation as its thread's single sequencer: the outbox every event
// leaves through, the thread's status, its subscribers, and unloading.

#include <algorithm>

#include "actors/core/log.hpp"
#include "actors/threads/conversation_detail.hpp"

namespace parley::conversation_detail {

namespace {

constexpr auto store_timeout = std::chrono::seconds(60);

}  // namespace

void broadcast(self_ptr self, const notification_ptr& n) {
  for (auto& client : self->state.subscribers) self->send(client, atom::event::value, n);
}

void broadcast(self_ptr self, notification_batch batch) {
  auto& subs = self->state.subscribers;
  if (subs.empty()) return;
  for (size_t i = 0; i + 1 < subs.size(); ++i) self->send(subs[i], atom::event::value, batch);
  self->send(subs.back(), atom::event::value, std::move(batch));
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
  self->state.outbox.post(std::move(deliver));
  quit_if_done(self);
}

void post_stored(self_ptr self, store_record record, std::function<void()> deliver) {
  auto& st = self->state;
  if (st.meta.ephemeral) return post(self, std::move(deliver));
  // What was not stored is not reported: the event is dropped and the turn
  // that wrote it stops, to end failed with the store's reason.
  auto seq = st.outbox.post_held(std::move(deliver));
  // No timeout: every store answers an append itself or through a linked I/O
  // actor (a record waiting for a full disk waits, capped, in the store), so
  // a failure bounces back as an error.
  self->request(st.svc->store, caf::infinite, atom::append::value, st.meta.id, std::move(record))
      .then(
          [self, seq](atom::ok) {
            self->state.outbox.release(seq);
            quit_if_done(self);
          },
          [self, seq, turn = st.active ? st.active->id : std::string{}](caf::error& err) {
            PARLEY_ERROR("conversation {} event=store_append_failed error={}",
                         self->state.meta.id, message_of(err));
            fail_turn_on_store(self, turn, err);
            self->state.outbox.drop(seq);
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
  auto seq = st.outbox.post_held([done, result] { done(*result); });
  auto release = [self, seq] {
    self->state.outbox.release(seq);
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
  post(self, [self, n = std::move(n)] { broadcast(self, n); });
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
