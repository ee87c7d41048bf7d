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
    // 1 -> 2: the cluster (issue 21). Every lease time is the database's
    // clock (clock_timestamp()), never a node's.
    //   parley_nodes   one row per node: its incarnation (bumped at each
    //                  join: leases of an older one are void) and its node
    //                  lease, renewed every ttl/3 while the node lives
    //   thread_leases  which node (and incarnation) holds each thread, and
    //                  the epoch: the fencing token its writes carry. A
    //                  released lease keeps its epoch (node NULL).
    "CREATE TABLE parley_nodes ("
    " name text PRIMARY KEY,"
    " address text NOT NULL DEFAULT '',"
    " incarnation bigint NOT NULL,"
    " lease_until timestamptz NOT NULL,"
    " joined_at timestamptz NOT NULL DEFAULT clock_timestamp());"
    "CREATE TABLE thread_leases ("
    " thread_id text PRIMARY KEY,"
    " node text,"
    " incarnation bigint NOT NULL DEFAULT 0,"
    " epoch bigint NOT NULL);"
    "CREATE INDEX thread_leases_by_node ON thread_leases (node) WHERE node IS NOT NULL;"
    // Whether node p_node of incarnation p_incarnation still holds its
    // node lease.
    "CREATE FUNCTION parley_node_alive(p_node text, p_incarnation bigint)"
    " RETURNS boolean LANGUAGE sql STABLE AS $body$"
    "  SELECT EXISTS (SELECT 1 FROM parley_nodes WHERE name = p_node"
    "   AND incarnation = p_incarnation AND lease_until > clock_timestamp())"
    " $body$;"
    // The fence, first statement of every write of a thread in cluster mode
    // (same transaction): with an epoch, the writer must hold the thread's
    // lease with that epoch; without (the thread is not loaded on the
    // writer), no live node may hold it. Either way the writer's node lease
    // must hold. The lease row is locked FOR SHARE until the write commits,
    // so a takeover (FOR UPDATE) waits for it and a write after a takeover
    // sees the new epoch. PA001: the thread is another's; PA002: the writer
    // itself is fenced.
    "CREATE FUNCTION parley_fence(p_thread text, p_node text, p_incarnation bigint,"
    " p_epoch bigint) RETURNS void LANGUAGE plpgsql AS $body$"
    " DECLARE l thread_leases%ROWTYPE;"
    " BEGIN"
    "  IF NOT parley_node_alive(p_node, p_incarnation) THEN"
    "   RAISE EXCEPTION USING ERRCODE = 'PA002', MESSAGE = format('node %s (incarnation %s)"
    " is fenced: its node lease expired or a newer incarnation joined; it writes nothing"
    " until it rejoins', p_node, p_incarnation);"
    "  END IF;"
    "  IF p_epoch IS NULL THEN"
    // (a row to lock, when the thread exists: a lease taken meanwhile waits)
    "   INSERT INTO thread_leases (thread_id, node, incarnation, epoch)"
    "    SELECT p_thread, NULL, 0, 0 WHERE EXISTS (SELECT 1 FROM threads WHERE id = p_thread)"
    "    ON CONFLICT (thread_id) DO NOTHING;"
    "  END IF;"
    "  SELECT * INTO l FROM thread_leases WHERE thread_id = p_thread FOR SHARE;"
    "  IF p_epoch IS NOT NULL THEN"
    "   IF NOT FOUND OR l.node IS DISTINCT FROM p_node OR l.incarnation <> p_incarnation"
    "      OR l.epoch <> p_epoch THEN"
    "    RAISE EXCEPTION USING ERRCODE = 'PA001', MESSAGE = format('thread %s is owned by node %s"
    " (epoch %s): node %s lost its lease (epoch %s)', p_thread, coalesce(l.node, 'none'),"
    " coalesce(l.epoch, 0), p_node, p_epoch);"
    "   END IF;"
    "  ELSIF FOUND AND l.node IS NOT NULL AND parley_node_alive(l.node, l.incarnation) THEN"
    "   RAISE EXCEPTION USING ERRCODE = 'PA001', MESSAGE = format('thread %s is owned by node %s',"
    " p_thread, l.node);"
    "  END IF;"
    " END $body$;"
    // Takes or confirms p_node's lease of a thread: (its epoch, NULL).
    // Free, released, or held by a dead or superseded incarnation: granted
    // with epoch + 1; already this incarnation's: the same epoch; held by
    // another live node: (NULL, that node), not an error, so a refusal
    // never rolls back the writes batched with it. A live holder is seen
    // before any lock is taken (two nodes asking for each other's threads
    // never wait on each other). A fenced asker: PA002.
    "CREATE FUNCTION parley_lease(p_thread text, p_node text, p_incarnation bigint,"
    " OUT epoch bigint, OUT owner text) LANGUAGE plpgsql AS $body$"
    " DECLARE l thread_leases%ROWTYPE;"
    " BEGIN"
    "  IF NOT parley_node_alive(p_node, p_incarnation) THEN"
    "   RAISE EXCEPTION USING ERRCODE = 'PA002', MESSAGE = format('node %s (incarnation %s)"
    " is fenced: its node lease expired or a newer incarnation joined; it takes no lease"
    " until it rejoins', p_node, p_incarnation);"
    "  END IF;"
    "  SELECT * INTO l FROM thread_leases WHERE thread_id = p_thread;"
    "  IF FOUND AND l.node IS NOT NULL AND l.node <> p_node"
    "     AND parley_node_alive(l.node, l.incarnation) THEN"
    "   owner := l.node;"
    "   RETURN;"
    "  END IF;"
    "  INSERT INTO thread_leases (thread_id, node, incarnation, epoch)"
    "   VALUES (p_thread, NULL, 0, 0) ON CONFLICT (thread_id) DO NOTHING;"
    "  SELECT * INTO l FROM thread_leases WHERE thread_id = p_thread FOR UPDATE;"
    "  IF l.node = p_node AND l.incarnation = p_incarnation THEN"
    "   epoch := l.epoch;"
    "   RETURN;"
    "  END IF;"
    // (the holder's node row locked: a renewal in flight ends first)
    "  IF l.node IS NOT NULL THEN"
    "   PERFORM 1 FROM parley_nodes WHERE name = l.node AND incarnation = l.incarnation"
    "    AND lease_until > clock_timestamp() FOR SHARE;"
    "   IF FOUND THEN"
    "    owner := l.node;"
    "    RETURN;"
    "   END IF;"
    "  END IF;"
    "  UPDATE thread_leases SET node = p_node, incarnation = p_incarnation, epoch = l.epoch + 1"
    "   WHERE thread_id = p_thread;"
    "  epoch := l.epoch + 1;"
    " END $body$;",
    // 2 -> 3: lists at a million threads (issue 28).
    //   tenant      a column (it was read from each row's first line, a
    //               subquery per row the planner cannot estimate: a page of
    //               a tenant scanned, and the plan's cost set off JIT
    //               compilation, 0.2-0.5 s a list at 100k threads); rows of
    //               a tenant other than the default are filled from their
    //               session metadata
    //   by tenant   one tenant's page among many tenants' threads: a range
    //   by cwd      a client's own folder (Codex's resume picker lists its
    //               cwd): a range, not a scan, for a cwd with few threads
    //   search      searchTerm's substring match as trigram GIN indexes
    //               (pg_trgm): a term found in few threads is their lookup
    //               and a sort of its hits, not a scan from the newest row
    //               until a page matched
    "ALTER TABLE threads ADD COLUMN tenant text NOT NULL DEFAULT 'default';"
    "UPDATE threads SET tenant = l.line->'payload'->>'tenant' FROM thread_lines l"
    " WHERE l.thread_id = threads.id AND l.seq = 0"
    " AND coalesce(l.line->'payload'->>'tenant', '') NOT IN ('', 'default');"
    "CREATE INDEX threads_by_tenant_updated ON threads (archived, tenant, updated_at, id)"
    " WHERE listed;"
    "CREATE INDEX threads_by_tenant_created ON threads (archived, tenant, created_at, id)"
    " WHERE listed;"
    "CREATE INDEX threads_by_cwd_updated ON threads (archived, cwd, updated_at, id) WHERE listed;"
    "CREATE INDEX threads_by_cwd_created ON threads (archived, cwd, created_at, id) WHERE listed;"
    "CREATE EXTENSION IF NOT EXISTS pg_trgm;"
    "CREATE INDEX threads_search_preview ON threads USING gin (preview gin_trgm_ops) WHERE listed;"
    "CREATE INDEX threads_search_name ON threads USING gin (name gin_trgm_ops)"
    " WHERE listed AND name IS NOT NULL;"
    // The planner guesses a term's hits from a sample of previews: with
    // 100 (the default), a term in 1.1% of the threads was guessed at 0.01%
    // after one ANALYZE and 1% after another, one in 0.1% at 2%, and the
    // plans flipped between the lookup and the scan (topic123 at 1M: 106 ms
    // a page against 27 with 1,000, which costs about 1 ms of planning).
    "ALTER TABLE threads ALTER COLUMN preview SET STATISTICS 1000;"
    "ANALYZE threads;",
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
