#pragma once

#include <caf/actor_clock.hpp>
#include <caf/group.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

namespace parley {

/// The actor system's clock (timeouts, request deadlines, delayed sends) with
/// CAF 0.17.6's deliveries but without waking a thread per entry.
///
/// CAF's `thread_safe_actor_clock` hands every call to its clock thread
/// through a queue and wakes that thread each time, although parley's
/// deadlines are due seconds to minutes later: per declined thread-turn that
/// was 8 wake-ups of the clock thread for nothing. Here the caller updates
/// the schedule itself under a lock, and the clock thread is woken only when
/// an entry is due before the moment it already plans to wake up. Cancelling
/// (an actor ending cancels all of its entries) never wakes it.
///
/// What an entry holds and delivers is CAF's: a strong reference to the actor
/// (so no actor lives longer or shorter than under CAF's clock), a
/// `timeout_msg` for ordinary and multi timeouts (an ordinary one replaces the
/// actor's previous one of its type), a `sec::request_timeout` response for a
/// request, the message itself for a scheduled send to an actor or a group.
/// Entries are shipped in order of their due time, outside the lock.
class lazy_actor_clock final : public caf::actor_clock {
 public:
  /// The longest the clock thread sleeps even with nothing due sooner, so
  /// a missed wake-up could only ever delay an entry this long.
  static constexpr duration_type default_longest_sleep = std::chrono::seconds(1);

  explicit lazy_actor_clock(duration_type longest_sleep = default_longest_sleep);
  ~lazy_actor_clock() override;

  lazy_actor_clock(const lazy_actor_clock&) = delete;
  lazy_actor_clock& operator=(const lazy_actor_clock&) = delete;

  // -- caf::actor_clock ----------------------------------------------------

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                            uint64_t id) override;
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                         uint64_t id) override;
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override;
  void cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) override;
  void cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) override;
  void cancel_timeouts(caf::abstract_actor* self) override;
  void schedule_message(time_point t, caf::strong_actor_ptr receiver,
                        caf::mailbox_element_ptr content) override;
  void schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                        caf::message content) override;
  void cancel_all() override;

  // -- the clock thread ----------------------------------------------------

  /// Ships entries as they fall due until `cancel_dispatch_loop`; on the way
  /// out drops whatever is still pending (as CAF's clock does at shutdown).
  void run_dispatch_loop();

  /// Makes `run_dispatch_loop` return (also before it started).
  void cancel_dispatch_loop();

  // -- observers (tests and measurements) ----------------------------------

  /// Entries not yet shipped or cancelled.
  size_t pending() const;

  /// Times a caller woke the clock thread for an entry due before its
  /// planned wake-up.
  uint64_t wake_ups() const;

  /// Whether the clock thread is asleep now (waiting for its planned wake-up).
  bool sleeping() const;

 private:
  enum class kind : uint8_t { ordinary_timeout, multi_timeout, request_timeout, actor_message,
                              group_message };

  struct entry;
  using schedule_map = std::multimap<time_point, entry>;
  /// The cancellable entries (timeouts) of each actor, by its id.
  using owner_index = std::multimap<caf::actor_id, schedule_map::iterator>;

  struct entry {
    kind what;
    /// The actor a timeout is for, or the receiver / sender of a scheduled message.
    caf::strong_actor_ptr actor;
    caf::atom_value timeout_type = caf::atom("");
    uint64_t timeout_id = 0;
    caf::message_id request;
    caf::mailbox_element_ptr content;  // a scheduled message to an actor
    caf::group target;                 // a scheduled message to a group
    caf::message group_content;
    /// Where a timeout sits in `owners_` (unset for scheduled messages).
    owner_index::iterator owner;
  };

  /// Adds under the lock; wakes the clock thread only when `t` is before the
  /// moment it plans to wake up anyway.
  void add(time_point t, entry x);
  /// Puts `x` into the schedule (the lock held); true when the clock
  /// thread must be woken (due before its planned wake-up).
  bool insert_locked(time_point t, entry x);
  /// Removes the first of `self`'s timeouts that `match` accepts.
  template <class Match>
  void cancel_one(caf::abstract_actor* self, Match match);
  /// Moves a scheduled entry into `out` (destroyed later, outside the lock).
  void take(schedule_map::iterator i, schedule_map& out);
  static void ship(entry& x);

  mutable std::mutex lock_;
  std::condition_variable wake_;
  const duration_type longest_sleep_;
  schedule_map schedule_;
  owner_index owners_;
  /// While the clock thread sleeps: when it will wake up on its own. While it
  /// works (or before it runs): the earliest time point, so nobody wakes it;
  /// it reads the schedule again before it sleeps.
  time_point planned_wake_up_ = time_point::min();
  bool stop_ = false;
  uint64_t wake_ups_ = 0;
};

}  // namespace parley
