#pragma once
// A turn and the thread items a turn sends most (userMessage, agentMessage,
// commandExecution) as JSON text, written straight into a string without
// an nlohmann DOM: what turn/started, turn/completed, item/started and
// item/completed carry (params_text). Byte for byte what nlohmann writes
// for their to_json (keys in its order, the same escapes); false, with
// `out` partly written, for any other item kind or a string that is not
// valid UTF-8: the caller then lets nlohmann write the whole.

#include <optional>
#include <string>
#include <vector>

#include "protocol/items.hpp"
#include "protocol/types.hpp"

namespace parley::protocol {

bool append_item(std::string& out, const thread_item& x);
/// One of a command's parsed actions (a commandExecution item's, an
/// approval request's).
bool append_command_action(std::string& out, const command_action& x);
bool append_turn(std::string& out, const turn& x);
/// A command's parsed actions, as an array.
bool append_command_actions(std::string& out, const std::vector<command_action>& xs);
/// Strings, as an array (false: one is not valid UTF-8).
bool append_string_array(std::string& out, const std::vector<std::string>& xs);
/// A string, or null when absent (false: not valid UTF-8).
bool append_string_or_null(std::string& out, const std::optional<std::string>& s);

}  // namespace parley::protocol
