#pragma once
// Parsing JSON from peers with a bound on its nesting. nlohmann's parser is
// iterative, but copying, comparing and dumping a value recurse once per
// level: a line of 100,000 `[` would overflow the stack the first time the
// value is copied. Values nested deeper than the bound are never built.

#include <string_view>

#include "protocol/json_codec.hpp"

namespace parley::protocol {

/// The deepest nesting accepted from a peer. Every object and array counts
/// one level, the outermost included, so `{"params":{"x":[]}}` is 3 levels.
/// serde_json (Codex) stops at 128 as well.
constexpr int max_json_depth = 128;

struct bounded_json {
  json value;             // discarded when the text is not valid JSON
  bool too_deep = false;  // something nested deeper than the bound was dropped
};

/// Parses `text`; containers deeper than `max_depth` are left out of `value`
/// (their contents are scanned, never built) and reported in `too_deep`.
bounded_json parse_bounded(std::string_view text, int max_depth = max_json_depth);

}  // namespace parley::protocol
