#pragma once
// What the PostgreSQL client runs and what it answers: statements with text
// parameters, rows of text values. Pure (no actors, no libpq types), shared by
// the connection, its I/O thread and the store.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace parley::pg {

/// A text value; nullopt is SQL NULL.
using value = std::optional<std::string>;

/// One statement: $1.. are `params`, sent apart from the SQL (never quoted in).
struct statement {
  std::string sql;
  std::vector<value> params;
};

struct result {
  std::vector<std::vector<value>> rows;
  int64_t affected = 0;  // rows an INSERT/UPDATE/DELETE touched
};

struct outcome {
  bool ok = true;
  /// Why it failed: the server's message, or what happened to the connection.
  std::string error;
  std::string sqlstate;
  /// The connection broke while the job was sent or running: it may have
  /// committed or not.
  bool connection_lost = false;
  std::vector<result> results;  // one per statement, when ok
};

/// Statements that commit together or not at all; `done` is called exactly
/// once, on the client's I/O thread (keep it short: a message to an actor).
struct job {
  std::vector<statement> statements;
  std::function<void(outcome)> done;
  /// Whether its commit waits for the WAL to reach the disk (a batch waits
  /// when any of its jobs does); else it is acknowledged once committed in
  /// the server, which a crash of the server (not of parley) may lose.
  bool durable = true;
};

inline outcome failed(std::string why, bool connection_lost = false) {
  outcome o;
  o.ok = false;
  o.error = std::move(why);
  o.connection_lost = connection_lost;
  return o;
}

}  // namespace parley::pg
