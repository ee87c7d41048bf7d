#pragma once
// The built-in deterministic "model": it reads the user's text and turns it
// into steps. Its language (one directive per line):
//
//   run: <command>   run a shell command (asks for approval per policy)
//   say: <text>      stream an agent message
//   ask: <question>  ask the user (item/tool/requestUserInput); `ask: {json}`
//                    gives request_user_input's whole arguments
//   call[NAME]: {json}  call a tool the client declared (item/tool/call)
//   permissions: {json}  ask for more sandbox permissions
//                    (item/permissions/requestApproval): request_permissions's
//                    arguments, {"permissions": {"file_system": {"read"?,
//                    "write"?: [path]}, "network"?: {"enabled": true}}}
//   patch:           change files: the following lines, through
//                    "*** End Patch", are a Codex apply_patch patch
//   summary: <text>  what it answers when the thread is compacted (the
//                    latest such line of the user's messages wins; none:
//                    it lists the user's messages)
//
// Directives run in order. Text with no directive is answered with a message
// that explains this language. A real model provider implements model_actor
// the same way (see interfaces.hpp).

#include <string>
#include <vector>

#include "actors/core/config.hpp"
#include "actors/core/interfaces.hpp"
#include <memory>
#include "actors/core/messages.hpp"

namespace parley {

/// The steps a user text asks for, in order (never empty for non-empty input).
std::vector<model_step> plan_steps(const std::string& user_text);

/// The next step for a turn: the steps of its text, then of each message
/// steered into it, indexed by the results so far; then done.
model_step next_step(const model_context& ctx);

/// A compaction's answer (thread/compact/start): the summary of
/// `ctx.history` and the context that replaces it.
compaction_result scripted_compaction(const model_context& ctx);

/// Splits a message into the pieces streamed as deltas (a few words each).
std::vector<std::string> split_into_deltas(const std::string& text);

/// The help message for text without directives.
const std::string& scripted_model_help();

/// A stateless actor answering next_step(). (`config` keeps the spawn from
/// being argument-less, which CAF 0.17 trips UBSan on.)
model_actor::behavior_type scripted_model(model_actor::pointer self,
                                          std::shared_ptr<const runtime_config> config);

}  // namespace parley
