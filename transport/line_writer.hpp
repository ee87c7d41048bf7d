#pragma once
// The only code that writes to the protocol stream (stdout for stdio). One
// message is one line. The lines go to a bounded fd_writer whose own thread
// writes them: a client that stops reading holds that thread, not this
// actor, and what waits for it is counted and bounded (issue 22).

#include <memory>

#include "actors/core/interfaces.hpp"
#include "transport/fd_writer.hpp"

namespace parley {

using line_writer_actor = caf::typed_actor<
    // Queue one line (without its newline).
    caf::reacts_to<std::string>,
    // The same, holding a model stream's credit (outgoing_event::credit)
    // until the line is in the outgoing queue, where it counts: what is on
    // its way to a slow client stays bounded (issue 22).
    caf::reacts_to<std::string, std::shared_ptr<const void>>,
    // Nothing left to do: the writer thread writes as lines come (kept for
    // writers that batch).
    caf::reacts_to<atom::flush>,
    // Write what is queued, then stop.
    caf::replies_to<atom::close>::with<atom::ok>>;

struct line_writer_state {
  static inline const char* name = "line_writer";
  std::shared_ptr<fd_writer> out;
};

line_writer_actor::behavior_type line_writer(line_writer_actor::stateful_pointer<line_writer_state> self,
                                             std::shared_ptr<fd_writer> out);

}  // namespace parley
