#pragma once
// For the approval benchmarks: one actor that stands in for a thread's
// conversation and for its one client, which accepts every ask at once.

#include <caf/event_based_actor.hpp>

#include "actors/core/interfaces.hpp"

namespace parley::bench {

inline caf::behavior instant_decider(caf::event_based_actor* self) {
  return {
      [self](atom::ask, const approval_ref&) {
        return client_list{caf::actor_cast<client_actor>(self)};
      },
      [](atom::ask, const approval_ask&) { return protocol::approval_decision::accept(); },
      [](atom::awaiting, const approval_ref&, const approval_actor&) {},
      [](atom::settled, const approval_ref&) {},
      // The action's phases are "stored" at once (no store here).
      [](atom::append, const action_record&) { return atom::ok::value; },
  };
}

}  // namespace parley::bench
