#pragma once
// The history a request may send, from what a thread has stored: its own
// models' items, Codex's (which carry fields of Codex's own, such as
// `internal_chat_message_metadata_passthrough`), or items a crash or an
// interrupt left without an answer. An endpoint refuses a request with an
// unknown field or a call without its output, so every request's history
// goes through here first:
//
//   - only the item kinds a request carries (message, reasoning, the call
//     kinds and their outputs), each with only its own fields; other kinds
//     (web searches, Codex's compaction and snapshot records) are left out;
//   - server ids dropped (nothing is stored server-side, so an id would
//     point at nothing); status kept only where the API wants it;
//   - reasoning only with its encrypted content, and never its raw text;
//   - a call with no output gets Codex's "aborted" right after it; an
//     output with no call before it is left out.

#include <nlohmann/json.hpp>
#include <vector>

namespace parley::wire {

/// The items of `history` a request sends, in order (a JSON array).
nlohmann::json request_history(const std::vector<nlohmann::json>& history);

}  // namespace parley::wire
