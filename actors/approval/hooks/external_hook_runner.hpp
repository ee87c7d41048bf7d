#pragma once
// The actor that runs one external hook program (external_hook.hpp) for one
// review request, to exactly one verdict.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/core/atoms.hpp"
#include "actors/approval/hooks/external_hook.hpp"
#include "actors/core/messages.hpp"
#include "actors/threads/process_reactor.hpp"

namespace parley {

/// Runs one hook program for one review request, to exactly one verdict.
using hook_runner_actor = caf::typed_actor<
    // The verdict once the program is done or its deadline passed. May come
    // before or after the program finishes; the runner quits after answering.
    caf::replies_to<atom::decide>::with<hooks::verdict>,
    // From the process reactor.
    caf::reacts_to<atom::output, std::string>,
    caf::reacts_to<atom::exited, exit_info>,
    // Its own deadline (the run's process id).
    caf::reacts_to<atom::timeout, uint64_t>>;

struct external_hook_state {
  static inline const char* name = "external_hook";
  hooks::external_hook_spec spec;
  process_id process = 0;
  int64_t pid = 0;  // the OS pid once reaped, for the log
  std::string output;
  std::chrono::steady_clock::time_point started;
  std::optional<hooks::verdict> result;
  std::vector<caf::typed_response_promise<hooks::verdict>> waiting;
};

/// Starts the program at once (stdin = request_json + "\n", stderr to
/// parley's stderr) and arms its deadline. Fails closed: spawn failure,
/// non-zero exit, garbage, too much output or the deadline ("approval
/// timeout") all deny. If the runner ends while the program still runs, its
/// process group is killed.
hook_runner_actor::behavior_type external_hook_runner(
    hook_runner_actor::stateful_pointer<external_hook_state> self, hooks::external_hook_spec spec,
    std::string request_json, std::shared_ptr<process_reactor> reactor);

}  // namespace parley
