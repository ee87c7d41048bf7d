#pragma once
// One running command: starts the subprocess through the process reactor,
// forwards its output and exit to the turn, and kills the whole process group
// if it ends (turn interrupted, shutdown, its timeout) before the command did.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "actors/core/interfaces.hpp"
#include "actors/threads/process_reactor.hpp"
#include "actors/core/telemetry.hpp"

namespace parley {

struct exec_state {
  static inline const char* name = "exec";
  counted live;  // the runtime's execs
  process_sink_actor turn;
  process_id process = 0;
  /// Set when the timeout killed it: the exit says so.
  std::string ended_by;
};

/// What to start (the launcher's argv when confined), or why it must not
/// start at all (`refusal`: the turn hears a start that never happened).
struct exec_request {
  spawn_spec spec;
  std::string refusal;
  std::chrono::milliseconds timeout{0};  // 0: none
};

/// A process sink that also keeps its command's deadline.
using exec_actor = process_sink_actor::extend<caf::reacts_to<atom::timeout>>;

exec_actor::behavior_type exec(exec_actor::stateful_pointer<exec_state> self,
                                       process_sink_actor turn, exec_request request,
                                       std::shared_ptr<process_reactor> reactor,
                                       std::shared_ptr<runtime_telemetry> telemetry);

}  // namespace parley
