#include "actors/store/postgres_schema.hpp"

#include <libpq-fe.h>

#include <memory>
#include <vector>

#include "actors/store/pg_blocking.hpp"
#include "actors/store/pg_client.hpp"

namespace parley::pg {

namespace postgres_schema_detail {

// Each version's step, from the one before. The tables follow the store's
// access paths:
//   thread_lines  a thread's history in order (its primary key is the
//                 order), each line the Codex rollout record as JSONB: a
//                 thread reads back as a rollout and leaves as one (export)
//   threads       one row per thread: what thread/list filters and sorts on
//                 (partial indexes over listed threads, per sort key, with the
//                 id as the cursor's tie-break) and the pending phase of its
//                 last turn (a partial index: a restart finds the few that
//                 wait without a scan). Written in the same transaction as
//                 the lines, so it never disagrees with them.
const std::vector<const char*> steps = {
    // 0 -> 1
    "CREATE TABLE threads ("
    " id text PRIMARY KEY,"
    " cwd text NOT NULL,"
    " preview text NOT NULL DEFAULT '',"
    " name text,"
    " source text NOT NULL,"
    " model_provider text NOT NULL,"
    " model text,"
    " forked_from text,"
    " created_at bigint NOT NULL,"
    " updated_at bigint NOT NULL,"
    " archived boolean NOT NULL DEFAULT false,"
    " listed boolean NOT NULL DEFAULT false,"
    " pending smallint NOT NULL DEFAULT 0,"
    " deadline_ms bigint NOT NULL DEFAULT 0);"
    "CREATE INDEX threads_by_updated ON threads (archived, updated_at, id) WHERE listed;"
    "CREATE INDEX threads_by_created ON threads (archived, created_at, id) WHERE listed;"
    "CREATE INDEX threads_pending ON threads (id) WHERE pending <> 0;"
    "CREATE TABLE thread_lines ("
    " thread_id text NOT NULL REFERENCES threads (id) ON DELETE CASCADE,"
    " seq integer NOT NULL,"
    " kind text NOT NULL,"
    " turn_id text,"
    " line jsonb NOT NULL,"
    " PRIMARY KEY (thread_id, seq));"
    // Appends name the line they follow, and one that does not follow the
    // thread's last line fails its transaction: when an append is lost
    // (its connection dropped), the ones sent after it cannot land past
    // the hole (the local store's rule: nothing after a record given up).
    "CREATE FUNCTION parley_append_lines(p_thread text, p_first integer, p_lines jsonb)"
    " RETURNS void LANGUAGE plpgsql AS $body$"
    " DECLARE held integer;"
    " BEGIN"
    "  SELECT coalesce(max(seq) + 1, 0) INTO held FROM thread_lines WHERE thread_id = p_thread;"
    "  IF held <> p_first THEN"
    "   RAISE EXCEPTION 'not stored: thread % holds % lines and this record would be line %"
    " (a record before it was not stored)', p_thread, held, p_first;"
    "  END IF;"
    "  INSERT INTO thread_lines (thread_id, seq, kind, turn_id, line)"
    "   SELECT p_thread, p_first + (o - 1)::integer,"
    "    (l->>'type') || coalesce(':' || (l->'payload'->>'type'), ''),"
    "    l->'payload'->>'turn_id', l"
    "   FROM jsonb_array_elements(p_lines) WITH ORDINALITY AS t(l, o);"
    " END $body$;",
};

/// The schema's version: 0 without one, -1 (and `why`) when it cannot be read.
int version_of(PGconn* c, std::string& why) {
  result_ptr exists{PQexec(c, "SELECT to_regclass('parley_schema') IS NOT NULL")};
  if (PQresultStatus(exists.get()) != PGRES_TUPLES_OK) {
    why = one_line(PQresultErrorMessage(exists.get()));
    return -1;
  }
  if (std::string{PQgetvalue(exists.get(), 0, 0)} != "t") return 0;
  result_ptr r{PQexec(c, "SELECT version FROM parley_schema")};
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
    why = one_line(PQresultErrorMessage(r.get()));
    return -1;
  }
  return PQntuples(r.get()) == 0 ? 0 : std::stoi(PQgetvalue(r.get(), 0, 0));
}

}  // namespace postgres_schema_detail

using namespace postgres_schema_detail;

migrate_report migrate(const std::string& conninfo) {
  migrate_report out;
  std::string why;
  auto c = connect_blocking(conninfo, why);
  if (!c) {
    out.message = why;
    return out;
  }
  auto fail = [&](const std::string& what) {
    exec(c.get(), "ROLLBACK", why);
    out.message = what;
    return out;
  };
  int from = 0;
  for (;;) {
    // One step per transaction, under a lock that serializes migrations.
    if (!exec(c.get(), "BEGIN", why)
        || !exec(c.get(), "SELECT pg_advisory_xact_lock(7234567001)", why)
        || !exec(c.get(),
                 "CREATE TABLE IF NOT EXISTS parley_schema (singleton boolean PRIMARY KEY "
                 "DEFAULT true CHECK (singleton), version integer NOT NULL)",
                 why))
      return fail("cannot migrate the schema: " + why);
    int v = version_of(c.get(), why);
    if (v < 0) return fail("cannot read the schema version: " + why);
    if (out.message.empty()) from = v;
    if (v > schema_version)
      return fail("the database's schema (version " + std::to_string(v)
                  + ") is newer than this parley knows (version " + std::to_string(schema_version)
                  + "): upgrade parley");
    if (v == schema_version) {
      exec(c.get(), "COMMIT", why);
      break;
    }
    if (!exec(c.get(), steps[static_cast<size_t>(v)], why))
      return fail("cannot upgrade the schema to version " + std::to_string(v + 1) + ": " + why);
    std::string set = "INSERT INTO parley_schema (version) VALUES (" + std::to_string(v + 1)
                      + ") ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version";
    if (!exec(c.get(), set, why) || !exec(c.get(), "COMMIT", why))
      return fail("cannot upgrade the schema to version " + std::to_string(v + 1) + ": " + why);
    out.message = "upgraded";
  }
  out.ok = true;
  out.message = from == schema_version
                    ? "schema version " + std::to_string(schema_version) + " is current"
                : from == 0 ? "created schema version " + std::to_string(schema_version)
                            : "upgraded the schema from version " + std::to_string(from) + " to "
                                  + std::to_string(schema_version);
  out.message += " (" + describe_target(conninfo) + ")";
  return out;
}

std::optional<std::string> schema_problem(const std::string& conninfo) {
  std::string why;
  auto c = connect_blocking(conninfo, why);
  if (!c) return why;
  int v = version_of(c.get(), why);
  if (v < 0) return "cannot read the schema version (" + describe_target(conninfo) + "): " + why;
  if (v == schema_version) return std::nullopt;
  if (v == 0)
    return "the database (" + describe_target(conninfo)
           + ") has no parley schema: run `parley store migrate` first";
  if (v < schema_version)
    return "the database's schema is version " + std::to_string(v) + ", this parley needs "
           + std::to_string(schema_version) + ": run `parley store migrate`";
  return "the database's schema (version " + std::to_string(v)
         + ") is newer than this parley knows (version " + std::to_string(schema_version)
         + "): upgrade parley, or point it at another database";
}

}  // namespace parley::pg
