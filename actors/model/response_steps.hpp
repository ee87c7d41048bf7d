#pragma once
// A finished model response as turn steps: each assistant message a `say`
// (completing the item its deltas streamed under), each command or patch
// call a `run` / `patch` step that remembers the call it answers, and each
// call parley cannot carry out (an unknown tool, bad arguments) an output for
// the model at once. Pure; tested alone.

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/core/messages.hpp"
#include "actors/model/wire/tool_calls.hpp"

namespace parley {

struct planned_step {
  model_step step;
  /// For run and patch: the call the step's result answers.
  std::optional<wire::tool_call> call;
};

struct response_plan {
  std::vector<planned_step> steps;
  /// Outputs for calls that never reach the turn (unknown or invalid).
  std::vector<nlohmann::json> immediate_outputs;
  /// Whether the model called any tool: then it is asked again once the
  /// steps are done; otherwise its answer ends the turn.
  bool called_tools = false;
};

/// `client_tools`: the names of the thread's client-declared tools.
response_plan plan_response(const std::vector<nlohmann::json>& output_items,
                            const std::set<std::string>& client_tools = {});

}  // namespace parley
