#pragma once
// The only code that writes to the protocol stream (stdout for stdio). One
// message is one line; lines queued together are written with one syscall.

#include "actors/core/interfaces.hpp"

namespace parley {

using line_writer_actor = caf::typed_actor<
    // Queue one line (without its newline).
    caf::reacts_to<std::string>,
    // Write what is queued (sent to itself after the first queued line).
    caf::reacts_to<atom::flush>,
    // Write what is queued, then stop.
    caf::replies_to<atom::close>::with<atom::ok>>;

struct line_writer_state {
  static inline const char* name = "line_writer";
  int fd = -1;
  std::string buffer;
  bool flush_pending = false;
  bool broken = false;  // the reader went away (EPIPE): drop further output
};

line_writer_actor::behavior_type line_writer(line_writer_actor::stateful_pointer<line_writer_state> self,
                                             int fd);

}  // namespace parley
