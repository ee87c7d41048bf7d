#pragma once
// Moving a thread between the PostgreSQL store and a Codex rollout file:
// `parley store export --thread ID` writes the thread's lines as the rollout
// they are (the real Codex opens it), `parley store import FILE` stores a
// rollout (Codex's or parley's) as a thread parley serves from the database.
//
// Command-line only: they wait on the database (pg_blocking.hpp).

#include <string>

namespace parley::pg {

struct transfer_report {
  bool ok = false;
  std::string message;  // what was done, or why not
};

/// Writes thread `thread_id` as a rollout: to `out_file` (atomically), or,
/// with `codex_home`, where Codex finds it
/// (CODEX_HOME/sessions/YYYY/MM/DD/rollout-...-ID.jsonl).
transfer_report export_thread(const std::string& conninfo, const std::string& thread_id,
                              const std::string& out_file, const std::string& codex_home);

/// Stores the rollout at `path` (plain or .zst) as a new thread, in one
/// transaction; refuses a thread the database already has.
transfer_report import_rollout(const std::string& conninfo, const std::string& path);

}  // namespace parley::pg
