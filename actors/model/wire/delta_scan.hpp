#pragma once
// The hot events of a Responses stream without a DOM: a text delta
// (response.output_text.delta) or a reasoning delta (the summary's or the raw
// text's) is most of what a model sends, one event per token or word, and a
// JSON parse into nlohmann's DOM was the largest part of what parley spent
// on each (issue 23). The scanner reads the event's data once, keeping the
// few fields the mapping uses, and says "not mine" (nullopt) for anything it
// does not fully recognise: another event type, a \u escape, a number that
// is not a short integer, invalid UTF-8, nesting past a small depth, a data
// that is not one JSON object. Then the caller maps the event through
// nlohmann as before. What it does return is what map_responses_event's
// nlohmann path returns for the same event (model_wire_tests compare both
// paths, as does the model_stream fuzzer).

#include <optional>

#include "actors/model/wire/sse_parser.hpp"
#include "actors/model/wire/stream_events.hpp"

namespace parley::wire {

/// The typed event of a text or reasoning delta event, or nullopt when the
/// event is anything else or anything the scanner does not fully recognise.
std::optional<stream_event> scan_delta_event(const sse_event& event);

/// The type of an event whose data the scanner fully recognises as one JSON
/// object (as nlohmann would parse it): the data's "type" when that is a
/// string, else the event's name; nullopt for anything it does not. For
/// the events parley does not use (a content part added or done, a text
/// done, ...): nlohmann's path only checks that their data is a JSON
/// object, and building its DOM of a whole text to drop it cost as much
/// as reading the deltas (issue 23).
std::optional<std::string> scanned_type(const sse_event& event);

}  // namespace parley::wire
