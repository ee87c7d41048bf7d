#pragma once
// What `parley chat` prints for an approval and for parley/stats. Pure text
// formatting, kept apart from the session loop so the loop stays about
// ordering and the wording stays in one place.

#include <cstddef>
#include <string>

#include "protocol/json_codec.hpp"
#include "transport/chat/approval_queue.hpp"
#include "transport/chat/visible_text.hpp"

namespace parley::chat_render {

/// "[approval 1 of 3] thread T: run `cmd` in /cwd\n", or for a file change
/// the header and then every change: its path, kind and diff (remembered
/// from item/started, since the request itself carries no diff). Every text
/// of the request goes through visible_text() (the command, cwd, reason and
/// paths on one line, a diff line by line); when one needed an escape, a
/// last line says so, so an escape is not taken for the text itself.
std::string approval(const queued_approval& q, size_t position, size_t total,
                     escape_style style = escape_style::plain);

/// The changes of a fileChange item (`[{path, kind:{type, move_path?}, diff}]`),
/// indented; add/delete contents are shown as +/- lines. Texts are shown
/// through visible_text().
std::string changes(const protocol::json& changes, escape_style style = escape_style::plain);

/// The question under a prompt.
const char* choices();

/// The result of parley/stats as one short block (two lines).
std::string stats(const protocol::json& result);

}  // namespace parley::chat_render
