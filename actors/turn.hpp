#pragma once
// One turn: the agent loop. It asks the model for a step, then says, runs or
// asks, and reports every item event to its conversation, which orders,
// stores and fans them out. An exit signal (turn/interrupt) resolves what is
// pending: the ask is withdrawn, the command's process group is killed, and
// the turn ends `interrupted`.

#include <optional>
#include <string>

#include "actors/counters.hpp"
#include "actors/interfaces.hpp"
#include "actors/output_buffer.hpp"
#include "actors/policy.hpp"
#include "actors/services.hpp"

namespace parley {

/// The settings a turn runs with (a snapshot of its conversation's).
struct turn_settings {
  std::string thread_id;
  std::string turn_id;
  std::string cwd;
  protocol::approval_policy policy;
  session_grants grants;
  std::string user_text;
};

struct turn_state {
  static inline const char* name = "turn";
  counted live{counters().turns};
  runtime_services svc;
  conversation_actor conversation;
  turn_settings settings;
  model_context context;
  /// The command item in progress, if any.
  std::optional<protocol::command_execution_item> command;
  std::string raw_command;  // what /bin/sh -c runs
  int64_t command_started_ms = 0;
  std::optional<uint64_t> pending_ask;
  caf::actor_addr approval_addr;
  std::optional<output_buffer> output;
  caf::actor_addr exec_addr;
  bool finished = false;
};

turn_actor::behavior_type turn(turn_actor::stateful_pointer<turn_state> self,
                               conversation_actor conversation, runtime_services svc,
                               turn_settings settings);

}  // namespace parley
