#pragma once
// What an HTTP model is told of a step the turn carried out for one of its
// calls: the text of the output item, in Codex's words (wire/tool_outcomes).

#include <string>

#include "actors/core/messages.hpp"
#include "actors/model/wire/tool_calls.hpp"

namespace parley {

std::string tool_result_text(const step_result& result, const wire::tool_call& call);

}  // namespace parley
