#pragma once
// The PostgreSQL store's schema, versioned. `parley store migrate` creates it
// or brings it up to this version (each step in one transaction, under an
// advisory lock, so two migrations never interleave); the server checks the
// version at start and refuses a database without the schema, with an older
// one, or with a newer one than it knows, saying what to do.
//
// These two run before any actor (the CLI command, the server's start) and
// wait on the database: they are never called from an actor.

#include <optional>
#include <string>

namespace parley::pg {

/// The schema this parley writes and reads.
constexpr int schema_version = 3;

/// Creates or upgrades the schema; what it did ("created schema version 2",
/// "schema version 2 is current"), or why it could not.
struct migrate_report {
  bool ok = false;
  std::string message;
};
migrate_report migrate(const std::string& conninfo);

/// Why the server cannot use this database (unreachable, no schema, another
/// version), or nothing when it can.
std::optional<std::string> schema_problem(const std::string& conninfo);

}  // namespace parley::pg
