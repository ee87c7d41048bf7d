#pragma once
// A notification's `params` as JSON text, written straight into a string
// for the shapes a turn sends most (message, reasoning and command output
// deltas; thread status changes; a turn's start and end, and its common
// items' start and end: protocol/item_text.hpp), without building an nlohmann DOM first.
// The text is byte for byte what `dump_line(params_of(n))` writes (keys in
// nlohmann's order, the same escapes); every other shape, and any string
// that is not valid UTF-8 (nlohmann replaces its bad bytes), is written
// by nlohmann itself.

#include <string>
#include <string_view>

#include "protocol/notifications.hpp"

namespace parley::protocol {

/// `params` of `n` as one line of JSON text.
std::string params_text(const notification& n);

/// Appends `s` as a JSON string literal, escaped as nlohmann's dump (not
/// ensure_ascii) escapes it. False, with `out` partly written, when `s`
/// is not valid UTF-8: the caller then lets nlohmann write it.
bool append_json_string(std::string& out, std::string_view s);

/// Appends `"key":` (keys are plain ASCII constants: nothing to escape).
void append_key(std::string& out, const char* key);

}  // namespace parley::protocol
