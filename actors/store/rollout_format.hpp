#pragma once
// The Codex rollout format (protocol.md §5), as the real Codex 0.169 writes
// and reads it (verified against the binary):
//
//   {"timestamp":"…Z","type":"session_meta","payload":{id, timestamp, cwd, originator, …}}
//   {"timestamp":"…Z","type":"event_msg","payload":{"type":"task_started","turn_id":…}}
//   … user_message / agent_message / item_completed / task_complete / turn_aborted …
//
// parley writes the legacy history mode, which Codex lists, reads, resumes
// and forks at once: messages as user_message / agent_message events, the
// turn's end as task_complete (with `error` when it failed) or turn_aborted.
// Commands are written as item_completed records carrying Codex's
// CommandExecution TurnItem: parley reads them back; Codex's legacy reader
// skips them (it shows no commands for legacy threads, its own included).
// response_item lines carry the model-visible history: derived from the
// items of turns whose model did not keep its own, else the model's items
// verbatim (context_record). Read back into stored_thread::context, each
// with the turn it was written in.
//
// Lines of parley's own types, which Codex's readers skip: `parley_git_info`
// (thread/metadata/update: the thread's Git metadata now, or null),
// `parley_injected` (thread/inject_items: the `items` response_item lines
// that follow were put into the history by a client, after the turn before
// them, rather than written by the turn that opens next) and
// `parley_reverted` (thread/revert rewrote the file: what was dropped).
//
// parley reads both shapes: older files whose turns come from user_message /
// agent_message, and 0.169 paginated files whose turns come from
// item_completed records. Unknown lines and fields are ignored.

#include <caf/expected.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/core/messages.hpp"

namespace parley::store {

inline constexpr const char* git_info_line_type = "parley_git_info";
inline constexpr const char* injected_line_type = "parley_injected";
inline constexpr const char* reverted_line_type = "parley_reverted";

/// The first line of a rollout.
std::string encode_session_meta(const protocol::thread& meta);

/// The time the lines of one record carry, and whether one of them is a line
/// a reader dates the thread by (its updated_at is the latest such line's).
struct line_stamp {
  int64_t at_ms = 0;   // milliseconds since the epoch
  bool dated = false;  // set by encode_record: an event line was written
};

/// The lines that record `record` for thread `meta`, each stamped `stamp.at_ms`.
std::vector<std::string> encode_record(const protocol::thread& meta, const store_record& record,
                                       line_stamp& stamp);

/// The same, stamped now.
std::vector<std::string> encode_record(const protocol::thread& meta, const store_record& record);

/// A whole thread (session_meta, then every turn with its model context):
/// forks are written at once.
std::vector<std::string> encode_thread(const protocol::thread& meta,
                                       const std::vector<context_item>& context = {});

/// The line that ends a rollout thread/revert rewrote: before which turn,
/// and how many turns were dropped.
std::string encode_reverted(const std::string& before_turn_id, size_t dropped_turns);

/// Why `line` cannot be a rollout's first line (its session metadata), or
/// nothing if it can.
std::optional<std::string> session_meta_problem(const std::string& line);

/// Rebuilds a thread from a rollout's lines. `path` and `first_line` (the
/// number of the line `lines` start with in the file) are only for messages:
/// "failed to read rollout `<path>`: line 1: <why>". A turn without an end
/// record counts as interrupted (as in Codex); lines that are not JSON
/// objects are skipped.
caf::expected<stored_thread> decode_rollout(const std::vector<std::string>& lines,
                                            const std::string& path, size_t first_line = 1);

/// Validates `path`, reads it (plain or .zst; a torn last line is skipped with
/// a warning) and decodes it. An unreadable rollout's error names the path
/// and the line.
caf::expected<stored_thread> read_rollout(const std::string& path);

/// "2025-11-07T07:20:00.123Z" for unix milliseconds, and back (0 if invalid).
std::string rfc3339_ms(int64_t unix_ms);
int64_t parse_rfc3339_ms(const std::string& text);

/// A shell-style join of argv, as Codex shows a command ("/bin/sh -c 'x'").
std::string shell_join(const std::vector<std::string>& argv);

/// file:// URIs for paths, as Codex's TurnItem cwd wants them, and back.
std::string path_to_file_uri(const std::string& path);
std::string file_uri_to_path(const std::string& uri);

}  // namespace parley::store
