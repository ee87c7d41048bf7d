#include "actors/runtime/lazy_actor_clock.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/abstract_group.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/sec.hpp>
#include <caf/system_messages.hpp>

#include <algorithm>
#include <utility>

namespace parley {

lazy_actor_clock::lazy_actor_clock(duration_type longest_sleep) : longest_sleep_(longest_sleep) {}

// Whatever is still pending goes with the clock. Released through
// cancel_all, not by the members' destructors: a released reference may end
// an actor, whose cleanup calls back into this clock.
lazy_actor_clock::~lazy_actor_clock() { cancel_all(); }

void lazy_actor_clock::set_ordinary_timeout(time_point t, caf::abstract_actor* self,
                                            caf::atom_value type, uint64_t id) {
  entry x;
  x.what = kind::ordinary_timeout;
  x.actor = self->ctrl();
  x.timeout_type = type;
  x.timeout_id = id;
  // The previous one of this type is replaced; its reference is released
  // after the lock (it may be the last one).
  schedule_map replaced;
  bool wake = false;
  {
    std::lock_guard<std::mutex> guard{lock_};
    auto range = owners_.equal_range(self->id());
    for (auto i = range.first; i != range.second; ++i) {
      auto& y = i->second->second;
      if (y.what == kind::ordinary_timeout && y.timeout_type == type) {
        take(i->second, replaced);
        owners_.erase(i);
        break;
      }
    }
    wake = insert_locked(t, std::move(x));
  }
  if (wake) wake_.notify_one();
}

void lazy_actor_clock::set_multi_timeout(time_point t, caf::abstract_actor* self,
                                         caf::atom_value type, uint64_t id) {
  entry x;
  x.what = kind::multi_timeout;
  x.actor = self->ctrl();
  x.timeout_type = type;
  x.timeout_id = id;
  add(t, std::move(x));
}

void lazy_actor_clock::set_request_timeout(time_point t, caf::abstract_actor* self,
                                           caf::message_id id) {
  entry x;
  x.what = kind::request_timeout;
  x.actor = self->ctrl();
  x.request = id;
  add(t, std::move(x));
}

void lazy_actor_clock::cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) {
  cancel_one(self, [type](const entry& y) {
    return y.what == kind::ordinary_timeout && y.timeout_type == type;
  });
}

void lazy_actor_clock::cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) {
  cancel_one(self,
             [id](const entry& y) { return y.what == kind::request_timeout && y.request == id; });
}

void lazy_actor_clock::cancel_timeouts(caf::abstract_actor* self) {
  // Every ending actor comes here (local_actor::cleanup): most have nothing
  // pending, which is one lookup. Nothing here wakes the clock thread: an
  // entry gone only makes its planned wake-up early.
  schedule_map dropped;
  {
    std::lock_guard<std::mutex> guard{lock_};
    auto range = owners_.equal_range(self->id());
    if (range.first == range.second) return;
    for (auto i = range.first; i != range.second; ++i) take(i->second, dropped);
    owners_.erase(range.first, range.second);
  }
}

void lazy_actor_clock::schedule_message(time_point t, caf::strong_actor_ptr receiver,
                                        caf::mailbox_element_ptr content) {
  entry x;
  x.what = kind::actor_message;
  x.actor = std::move(receiver);
  x.content = std::move(content);
  add(t, std::move(x));
}

void lazy_actor_clock::schedule_message(time_point t, caf::group target,
                                        caf::strong_actor_ptr sender, caf::message content) {
  entry x;
  x.what = kind::group_message;
  x.actor = std::move(sender);
  x.target = std::move(target);
  x.group_content = std::move(content);
  add(t, std::move(x));
}

void lazy_actor_clock::cancel_all() {
  schedule_map dropped;
  std::lock_guard<std::mutex> guard{lock_};
  owners_.clear();
  dropped.swap(schedule_);
  // `dropped` outlives the guard (declared first): released unlocked.
}

void lazy_actor_clock::run_dispatch_loop() {
  std::unique_lock<std::mutex> guard{lock_};
  while (!stop_) {
    auto now = clock_type::now();
    if (!schedule_.empty() && schedule_.begin()->first <= now) {
      // Everything due, in order of due time; shipped and released unlocked
      // (a delivery or a released reference may call back into the clock).
      schedule_map due;
      while (!schedule_.empty() && schedule_.begin()->first <= now) {
        auto i = schedule_.begin();
        if (i->second.what <= kind::request_timeout) owners_.erase(i->second.owner);
        take(i, due);
      }
      guard.unlock();
      for (auto& kv : due) ship(kv.second);
      due.clear();
      guard.lock();
      continue;
    }
    auto until = now + longest_sleep_;
    if (!schedule_.empty()) until = std::min(until, schedule_.begin()->first);
    planned_wake_up_ = until;
    wake_.wait_until(guard, until);
    planned_wake_up_ = time_point::min();
  }
  schedule_map dropped;
  owners_.clear();
  dropped.swap(schedule_);
  guard.unlock();
}

void lazy_actor_clock::cancel_dispatch_loop() {
  {
    std::lock_guard<std::mutex> guard{lock_};
    stop_ = true;
  }
  wake_.notify_one();
}

size_t lazy_actor_clock::pending() const {
  std::lock_guard<std::mutex> guard{lock_};
  return schedule_.size();
}

uint64_t lazy_actor_clock::wake_ups() const {
  std::lock_guard<std::mutex> guard{lock_};
  return wake_ups_;
}

bool lazy_actor_clock::sleeping() const {
  std::lock_guard<std::mutex> guard{lock_};
  return planned_wake_up_ != time_point::min();
}

void lazy_actor_clock::add(time_point t, entry x) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> guard{lock_};
    wake = insert_locked(t, std::move(x));
  }
  if (wake) wake_.notify_one();
}

bool lazy_actor_clock::insert_locked(time_point t, entry x) {
  bool cancellable = x.what <= kind::request_timeout;
  auto owner = cancellable ? x.actor->id() : caf::actor_id{0};
  auto i = schedule_.emplace(t, std::move(x));
  if (cancellable) i->second.owner = owners_.emplace(owner, i);
  if (t >= planned_wake_up_) return false;
  planned_wake_up_ = t;
  ++wake_ups_;
  return true;
}

template <class Match>
void lazy_actor_clock::cancel_one(caf::abstract_actor* self, Match match) {
  schedule_map dropped;
  std::lock_guard<std::mutex> guard{lock_};
  auto range = owners_.equal_range(self->id());
  for (auto i = range.first; i != range.second; ++i) {
    if (match(i->second->second)) {
      take(i->second, dropped);
      owners_.erase(i);
      return;
    }
  }
}

void lazy_actor_clock::take(schedule_map::iterator i, schedule_map& out) {
  // Moving the node itself: no allocation, and the entry is destroyed with
  // `out`, after the caller let go of the lock.
  out.insert(schedule_.extract(i));
}

void lazy_actor_clock::ship(entry& x) {
  switch (x.what) {
    case kind::ordinary_timeout:
    case kind::multi_timeout:
      x.actor->get()->eq_impl(caf::make_message_id(), x.actor, nullptr,
                              caf::timeout_msg{x.timeout_type, x.timeout_id});
      break;
    case kind::request_timeout:
      x.actor->get()->eq_impl(x.request, x.actor, nullptr, caf::sec::request_timeout);
      break;
    case kind::actor_message:
      x.actor->enqueue(std::move(x.content), nullptr);
      break;
    case kind::group_message:
      x.target->eq_impl(caf::make_message_id(), std::move(x.actor), nullptr,
                        std::move(x.group_content));
      break;
  }
}

}  // namespace parley
