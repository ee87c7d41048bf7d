#pragma once
// command/exec (issue 29): a command a client runs outside any thread.
//
// One `command_exec` actor per process: it starts the process through the
// process reactor (confined by parley-sandbox as a turn's commands are),
// keeps or streams its stdout and stderr (each capped), feeds its stdin or
// terminal, keeps its deadline, and answers the command/exec request exactly
// once, when the process has ended and every delta has been sent.
//
// The `command_registry` (one per thread manager, linked to it) owns them,
// keyed by (client, processId), for write/terminate/resize. A command
// belongs to its client: it dies with the client (monitored) and with the
// registry (linked), and its whole process group with it.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"

namespace parley {

struct spawn_spec;       // actors/threads/process_reactor.hpp
class process_reactor;  // likewise

using command_exec_actor = caf::typed_actor<
    // From the process reactor: stdout (a terminal's output), stderr, the exit.
    caf::reacts_to<atom::output, std::string>, caf::reacts_to<atom::err_output, std::string>,
    caf::reacts_to<atom::exited, exit_info>,
    // Its own deadline.
    caf::reacts_to<atom::timeout>,
    // The command/exec request: answered once the process has ended.
    caf::replies_to<atom::exec_start>::with<protocol::command_exec_response>,
    // command/exec/write (bytes, closeStdin), /terminate, /resize.
    caf::replies_to<atom::exec_write, std::string, bool>::with<atom::ok>,
    caf::replies_to<atom::exec_kill>::with<atom::ok>,
    caf::replies_to<atom::exec_resize, protocol::terminal_size>::with<atom::ok>,
    // Its client is behind in reading (a connection tells every actor that
    // sends it events): command output is capped, it is not held.
    caf::reacts_to<atom::pressure, client_actor, bool>>;

using command_registry_actor = caf::typed_actor<
    caf::replies_to<atom::exec_start, protocol::command_exec_params,
                    client_actor>::with<protocol::command_exec_response>,
    caf::replies_to<atom::exec_write, std::string, std::string, bool, client_actor>::with<atom::ok>,
    caf::replies_to<atom::exec_kill, std::string, client_actor>::with<atom::ok>,
    caf::replies_to<atom::exec_resize, std::string, protocol::terminal_size,
                    client_actor>::with<atom::ok>,
    // A command ended (sent before its reply, so the processId is free again
    // by the time the client hears the reply).
    caf::reacts_to<atom::exec_gone, caf::actor_addr>>;

struct command_registry_state {
  static inline const char* name = "command_registry";
  runtime_services svc;
  /// (client, processId) -> its running command. Commands without a
  /// client-supplied id are not here (nothing can address them).
  std::map<std::pair<caf::actor_addr, std::string>, command_exec_actor> running;
  /// Every command it started and that still lives (linked to it).
  std::set<caf::actor_addr> children;
};

command_registry_actor::behavior_type command_registry(
    command_registry_actor::stateful_pointer<command_registry_state> self, runtime_services svc);

/// How one command runs, decided by the registry.
struct command_exec_setup {
  client_actor client;
  command_registry_actor registry;
  std::string process_id;  // the client's; empty = none given
  bool stream_output = false;
  bool stream_stdin = false;
  bool tty = false;
  /// Killed after this long (exit code 124); 0 = at once.
  std::chrono::milliseconds timeout{0};
  /// Bytes kept (or streamed) per stream; nullopt = no cap.
  std::optional<uint64_t> cap;
};

/// One stream's capture: kept for the reply, or streamed as deltas; either
/// way nothing past the cap.
struct captured_stream {
  std::string kept;
  uint64_t seen = 0;
  bool cap_reached = false;
};

struct command_exec_state {
  static inline const char* name = "command_exec";
  command_exec_setup setup;
  counted live;  // the runtime's execs
  std::shared_ptr<process_reactor> reactor;
  uint64_t process = 0;  // the reactor's id
  std::shared_ptr<bool> reaped = std::make_shared<bool>(false);
  bool stdin_closed = false;
  bool timed_out = false;
  captured_stream out, err;
  caf::typed_response_promise<protocol::command_exec_response> reply;
  bool asked = false;  // the reply promise exists
  std::optional<protocol::command_exec_response> result;  // ended before asked
  caf::error failed;  // never started, before asked
};

command_exec_actor::behavior_type command_exec(
    command_exec_actor::stateful_pointer<command_exec_state> self, command_exec_setup setup,
    spawn_spec spec, runtime_services svc);

}  // namespace parley
