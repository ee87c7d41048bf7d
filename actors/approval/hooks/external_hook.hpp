#pragma once
// External hook programs: a deployment's own reviewers for approvals (e.g. a
// script that asks on Slack). parley runs the program, writes the review
// request as JSON on its stdin and reads one JSON decision from its stdout.
// Anything but a clean answer in time denies: a reviewer that is configured
// but broken must never turn into "allowed".
//
// Configuration (HOME/hooks.json):
//   {"hooks": [{"name": "ticket",
//               "command": ["/usr/local/bin/ticket-hook", "--queue", "ops"],
//               "timeoutMs": 5000,                  // optional, default 5000
//               "on": ["command", "fileChange"]}]}  // optional, default all
// Answer (stdout): {"decision": "allow"|"deny"|"abstain", "reason": "..."}
//
// This header is parsing (no actors); the spec of a hook program is plain
// data in actors/core/approval_types.hpp (runtime_config carries it), and the
// actor that runs a program is in external_hook_runner.hpp.

#include <cstddef>
#include <string>
#include <vector>

#include "actors/approval/hooks/review.hpp"
#include "actors/core/approval_types.hpp"

namespace parley::hooks {

/// Reads `home`/hooks.json. A missing file means no hooks. Anything malformed
/// throws std::runtime_error naming the file and the offending field: the
/// server must refuse to start rather than run without a configured reviewer.
std::vector<external_hook_spec> load_external_hooks(const std::string& home);

/// Turns a hook program's complete stdout into a verdict. Exactly one JSON
/// object with a known "decision" (surrounding whitespace allowed); anything
/// else denies with "hook <name> answered garbage: ...".
verdict parse_hook_output(const std::string& name, const std::string& stdout_text);

/// Most stdout a hook may write; more is garbage (and ends the program).
inline constexpr size_t max_hook_output = 64 * 1024;

}  // namespace parley::hooks
