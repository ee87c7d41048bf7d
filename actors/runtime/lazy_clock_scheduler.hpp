#pragma once

#include <caf/abstract_actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <chrono>
#include <cstddef>

#include "actors/runtime/lazy_actor_clock.hpp"

namespace parley {

/// Gives the actor system CAF's sharing scheduler, unchanged, with a
/// `lazy_actor_clock` as its clock (run by a thread named "parley.clock").
/// `longest_sleep` bounds the clock thread's sleep; tests make it long to
/// show that an earlier entry wakes it.
void use_lazy_clock_scheduler(
    caf::actor_system_config& cfg, size_t threads,
    caf::actor_clock::duration_type longest_sleep = lazy_actor_clock::default_longest_sleep);

/// Moves `who`, if it waits in the ordinary lane of `sys`'s scheduler, to the
/// express lane; whether it did. For the WebSocket I/O thread after it hands
/// a connection its client's answer: a connection already queued (it had
/// events to write) is not woken again, so without this the answer would
/// wait behind every job queued before the connection. False on any other
/// scheduler, and for an actor that is running, express already, or idle
/// (an idle one was woken by the send, into the express lane).
bool move_to_express_lane(caf::actor_system& sys, caf::abstract_actor* who);

/// The system's lazy clock, or null when the system runs another scheduler.
lazy_actor_clock* lazy_clock_of(caf::actor_system& sys);

}  // namespace parley
