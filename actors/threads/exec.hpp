#pragma once
// One running command: starts the subprocess through the process reactor,
// forwards its output and exit to the turn, and kills the whole process group
// if it ends (turn interrupted, shutdown) before the command did.

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
};

/// `env`: the command's environment (runtime_config::command_environment);
/// null = parley's own.
process_sink_actor::behavior_type exec(process_sink_actor::stateful_pointer<exec_state> self,
                                       process_sink_actor turn, std::string command,
                                       std::string cwd, std::shared_ptr<process_reactor> reactor,
                                       std::shared_ptr<runtime_telemetry> telemetry,
                                       std::shared_ptr<const std::vector<std::string>> env);

}  // namespace parley
