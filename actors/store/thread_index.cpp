#include "actors/store/thread_index.hpp"

#include <sqlite3.h>
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "actors/core/tenant.hpp"

namespace parley::store {

namespace {

// 2: the pending action of each thread's last turn.
// 3: its Git metadata (thread/metadata/update).
// 4: the rollout's inode; sizes kept exact by rollout_io (index_journal).
// 5: the thread's tenant (issue 22): lists are of one tenant's threads.
// 6: threads_search, a trigram FTS5 table over preview and name (issue 28).
// 7: threads_search keyed by the list's default order (search_key), so a
//    search walks its hits newest first and stops after a page.
constexpr int schema_version = 7;

/// The search table's key (its rowid) of a threads row, as SQL over the
/// row's columns (`r`: "new.", "old." or ""): minus the creation second
/// since 2020-01-01 (clamped to 31 bits: until 2088) times 2^32 plus the
/// row's rowid (below 2^32 for the first 4 billion threads an index holds).
/// FTS5 yields a match's hits in ascending rowid order, so newest created
/// first (the list's default), threads of one second together; ascending
/// is its fast direction (it skips through a long doclist towards a rare
/// trigram's next hit; descending walks it: 162 ms against 0.8 for a term
/// of one thread at 1M). Unique per row: the row's rowid is in it.
std::string search_key(const std::string& r) {
  return "(-((max(0, min(" + r + "created_at - 1577836800, 2147483647)) << 32) + (" + r
         + "rowid & 4294967295)))";
}

/// A row's creation second in the search key (search_key's clamp).
int64_t search_second(int64_t created_at) {
  constexpr int64_t epoch = 1577836800;
  if (created_at <= epoch) return 0;
  return std::min<int64_t>(created_at - epoch, 2147483647);
}

/// The threads rowid and the creation second a search key holds.
int64_t rowid_of_key(int64_t key) { return (-key) & 4294967295LL; }
int64_t second_of_key(int64_t key) { return (-key) >> 32; }

/// meta keys of a search table still being filled: the next rowid to fill
/// and the last one (the largest rowid when it was created; every row
/// inserted since is indexed by the triggers).
constexpr const char* fill_next_key = "search_fill_next";
constexpr const char* fill_end_key = "search_fill_end";

size_t utf8_chars(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

/// `term` as one FTS5 phrase: in double quotes, a quote doubled, so that
/// every character (`*`, `:`, `^`, parentheses, AND, NEAR...) is matched as
/// it is. The trigram tokenizer makes a phrase a substring match.
std::string fts_phrase(const std::string& term) {
  std::string out = "\"";
  for (char c : term) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw std::runtime_error("thread index: " + what + ": " + (db ? sqlite3_errmsg(db) : "?"));
}

void bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

void bind_opt(sqlite3_stmt* s, int i, const std::optional<std::string>& v) {
  if (v)
    bind_text(s, i, *v);
  else
    sqlite3_bind_null(s, i);
}

std::string text(sqlite3_stmt* s, int col) {
  auto* p = sqlite3_column_text(s, col);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(s, col)))
           : std::string{};
}

std::optional<std::string> opt_text(sqlite3_stmt* s, int col) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return std::nullopt;
  return text(s, col);
}

constexpr const char* columns
    = "id, path, cwd, preview, name, created_at, updated_at, archived, forked_from, source, "
      "model_provider, model, file_mtime_ns, file_size, pending, deadline_ms, git_info, file_inode, "
      "tenant";

index_entry read_row(sqlite3_stmt* s) {
  index_entry e;
  e.id = text(s, 0);
  e.path = text(s, 1);
  e.cwd = text(s, 2);
  e.preview = text(s, 3);
  e.name = opt_text(s, 4);
  e.created_at = sqlite3_column_int64(s, 5);
  e.updated_at = sqlite3_column_int64(s, 6);
  e.archived = sqlite3_column_int(s, 7) != 0;
  e.forked_from = opt_text(s, 8);
  e.source = text(s, 9);
  e.model_provider = text(s, 10);
  e.model = opt_text(s, 11);
  e.file_mtime_ns = sqlite3_column_int64(s, 12);
  e.file_size = sqlite3_column_int64(s, 13);
  e.pending = sqlite3_column_int(s, 14);
  e.deadline_ms = sqlite3_column_int64(s, 15);
  e.git_info = opt_text(s, 16);
  e.file_inode = sqlite3_column_int64(s, 17);
  e.tenant = text(s, 18);
  return e;
}

struct statement {
  sqlite3_stmt* s;
  ~statement() { sqlite3_finalize(s); }
};

}  // namespace

std::string encode_cursor(int64_t sort_value, const std::string& id) {
  return std::to_string(sort_value) + ":" + id;
}

bool decode_cursor(const std::string& cursor, int64_t& sort_value, std::string& id) {
  auto colon = cursor.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  try {
    size_t used = 0;
    sort_value = std::stoll(cursor.substr(0, colon), &used);
    if (used != colon) return false;
  } catch (...) {
    return false;
  }
  id = cursor.substr(colon + 1);
  return !id.empty();
}

thread_index::thread_index(const std::string& path) {
  // SQLite's allocation statistics take a global mutex around every malloc
  // and free (4% of a reconcile's CPU at 1M threads); nothing reads them.
  // Before SQLite initializes, once; refused (harmlessly) after.
  static const int memstatus_off = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)memstatus_off;
  try {
    open(path);
  } catch (...) {
    // A file that is not a database (or a disk that refuses): nothing leaks.
    sqlite3_finalize(upsert_);
    sqlite3_finalize(find_);
    sqlite3_finalize(file_of_);
    sqlite3_finalize(remove_);
    sqlite3_finalize(set_file_);
    sqlite3_close(db_);
    throw;
  }
}

void thread_index::open(const std::string& path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr)
      != SQLITE_OK)
    fail(db_, "open " + path);
  // WAL: readers never wait for the writer; NORMAL sync is enough for a
  // rebuildable index.
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  // The write-ahead log stays small: checkpointed every 200 pages (not
  // 1,000) and cut back to 1 MiB after each. Left to itself it keeps its
  // largest size (4 MiB and more under load): space a nearly full disk needs
  // for the rollouts, and which it takes first once space is freed.
  exec("PRAGMA wal_autocheckpoint=200");
  exec("PRAGMA journal_size_limit=1048576");
  // 16 MiB of pages (the default is 2): the b-trees' inner pages stay
  // cached, so a search's row reads by rowid at 1M threads (a page of
  // them scattered over the file) cost a read each, not three.
  exec("PRAGMA cache_size=-16384");
  exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)");
  int found = 0;
  {
    statement v{prepare("SELECT value FROM meta WHERE key='schema_version'")};
    found = sqlite3_step(v.s) == SQLITE_ROW ? std::stoi(text(v.s, 0)) : 0;
  }
  // Version 4 lacks only the tenant: its threads were stored before tenants,
  // so they are the default tenant's, which the new column says. The rows
  // stay (an upgrade re-reads nothing). Any other version's rows are rebuilt
  // from the rollouts. (The read above is finished first: SQLite refuses to
  // drop a table while a statement runs.)
  // Version 5 lacks only the search table: it is added and filled behind
  // the lists (fill_search), never by reading the rollouts again. Version
  // 6 has one keyed by the rows' rowids: it is set aside (renamed, dropped
  // by the fill's first step) and the new one filled the same way.
  if (found == 4)
    exec("ALTER TABLE threads ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default'");
  else if (found != 0 && found != 4 && found != 5 && found != 6 && found != schema_version) {
    exec("DROP TABLE IF EXISTS threads_search");
    exec("DROP TABLE IF EXISTS threads_search_v6");
    exec("DROP TABLE IF EXISTS threads");
    exec("DELETE FROM meta WHERE key IN ('search_fill_next', 'search_fill_end')");
  }
  {
    statement t{prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name='threads'")};
    created_ = sqlite3_step(t.s) != SQLITE_ROW;
  }
  exec(
      "CREATE TABLE IF NOT EXISTS threads("
      " id TEXT PRIMARY KEY, path TEXT NOT NULL, cwd TEXT NOT NULL, preview TEXT NOT NULL,"
      " name TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
      " archived INTEGER NOT NULL DEFAULT 0, forked_from TEXT, source TEXT NOT NULL,"
      " model_provider TEXT NOT NULL, model TEXT, file_mtime_ns INTEGER NOT NULL DEFAULT 0,"
      " file_size INTEGER NOT NULL DEFAULT 0, pending INTEGER NOT NULL DEFAULT 0,"
      " deadline_ms INTEGER NOT NULL DEFAULT 0, git_info TEXT,"
      " file_inode INTEGER NOT NULL DEFAULT 0, tenant TEXT NOT NULL DEFAULT 'default')");
  // Only the few threads that wait are in it: a restart finds them at once.
  exec("CREATE INDEX IF NOT EXISTS threads_pending ON threads(pending) WHERE pending != 0");
  exec("CREATE INDEX IF NOT EXISTS threads_by_created ON threads(archived, created_at, id)");
  exec("CREATE INDEX IF NOT EXISTS threads_by_updated ON threads(archived, updated_at, id)");
  // A client's own folder (Codex's resume picker lists its cwd): a page of a
  // cwd with few threads among a million is a range, not a scan.
  exec("CREATE INDEX IF NOT EXISTS threads_by_cwd_created ON threads(archived, cwd, created_at, id)");
  exec("CREATE INDEX IF NOT EXISTS threads_by_cwd_updated ON threads(archived, cwd, updated_at, id)");
  // One tenant's page among many tenants' threads: a range as well.
  exec("CREATE INDEX IF NOT EXISTS threads_by_tenant_created"
       " ON threads(archived, tenant, created_at, id)");
  exec("CREATE INDEX IF NOT EXISTS threads_by_tenant_updated"
       " ON threads(archived, tenant, updated_at, id)");
  exec("BEGIN");
  try {
    if (found == 6) set_aside_search_table_v6();
    create_search_table();
    exec(("INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', '"
          + std::to_string(schema_version) + "')")
             .c_str());
    exec("COMMIT");
  } catch (...) {
    try {
      exec("ROLLBACK");
    } catch (...) {
    }
    throw;
  }
  {
    statement f{prepare(std::string{"SELECT 1 FROM meta WHERE key='"} + fill_next_key + "'")};
    search_ready_ = sqlite3_step(f.s) != SQLITE_ROW;
  }
  {
    statement v6{prepare("SELECT 1 FROM sqlite_master WHERE name='threads_search_v6'")};
    old_search_table_ = sqlite3_step(v6.s) == SQLITE_ROW;
  }
  // With no rows to fill (an empty index) nothing runs the fill: it goes now.
  if (old_search_table_ && search_ready_) fill_search(0);
  // An upsert, not INSERT OR REPLACE: the row keeps its rowid, so the
  // search table (keyed by it) changes only when the preview or name does.
  std::string set;
  for (const char* c : {"path", "cwd", "preview", "name", "created_at", "updated_at", "archived",
                        "forked_from", "source", "model_provider", "model", "file_mtime_ns",
                        "file_size", "pending", "deadline_ms", "git_info", "file_inode", "tenant"})
    set += std::string{set.empty() ? "" : ", "} + c + "=excluded." + c;
  upsert_ = prepare(std::string{"INSERT INTO threads("} + columns
                    + ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                    + set);
  find_ = prepare(std::string{"SELECT "} + columns + " FROM threads WHERE id=?");
  file_of_ = prepare(
      "SELECT rowid, path, file_size, file_mtime_ns, file_inode FROM threads WHERE id=?");
  remove_ = prepare("DELETE FROM threads WHERE id=?");
  set_file_ = prepare(
      "UPDATE threads SET file_size=?, file_mtime_ns=?, file_inode=? WHERE id=? AND path=?");
}

/// The search table: a trigram FTS5 table over each row's preview and name,
/// keyed by the row's rowid and kept in step by triggers, so in the same
/// transaction as every write of the rows (a delete, prune included, takes
/// its entry along). It keeps its own copy of the text (not an external
/// content table): a row not yet filled can then be deleted or replaced
/// safely (an external content table must be told the text it indexed).
/// Trigram folds case (Unicode), so it finds a superset of what the
/// ASCII-only case folding of the list's match finds; the list rechecks.
/// Created on an index with rows (an upgrade from schema 5), those up to
/// the largest rowid now are filled later (fill_search); rows inserted
/// after it are the triggers'.
void thread_index::create_search_table() {
  {
    statement t{prepare("SELECT 1 FROM sqlite_master WHERE name='threads_search'")};
    if (sqlite3_step(t.s) == SQLITE_ROW) return;
  }
  exec("CREATE VIRTUAL TABLE threads_search USING fts5(preview, name, tokenize='trigram')");
  // DELETE then INSERT, not INSERT OR REPLACE: a trigger fired by an
  // upsert's DO UPDATE runs its statements under ABORT whatever they say.
  // The key follows created_at: a change of it moves the entry.
  exec(("CREATE TRIGGER threads_search_insert AFTER INSERT ON threads BEGIN"
        " DELETE FROM threads_search WHERE rowid = " + search_key("new.") + ";"
        " INSERT INTO threads_search(rowid, preview, name)"
        " VALUES(" + search_key("new.") + ", new.preview, new.name); END")
           .c_str());
  exec(("CREATE TRIGGER threads_search_update AFTER UPDATE OF preview, name, created_at ON threads"
        " WHEN old.preview IS NOT new.preview OR old.name IS NOT new.name"
        " OR old.created_at IS NOT new.created_at BEGIN"
        " DELETE FROM threads_search WHERE rowid = " + search_key("old.") + ";"
        " INSERT INTO threads_search(rowid, preview, name)"
        " VALUES(" + search_key("new.") + ", new.preview, new.name); END")
           .c_str());
  exec(("CREATE TRIGGER threads_search_delete AFTER DELETE ON threads BEGIN"
        " DELETE FROM threads_search WHERE rowid = " + search_key("old.") + "; END")
           .c_str());
  statement m{prepare("SELECT min(rowid), max(rowid) FROM threads")};
  if (sqlite3_step(m.s) != SQLITE_ROW || sqlite3_column_type(m.s, 0) == SQLITE_NULL) return;
  auto lo = std::to_string(sqlite3_column_int64(m.s, 0));
  auto hi = std::to_string(sqlite3_column_int64(m.s, 1));
  exec((std::string{"INSERT OR REPLACE INTO meta(key, value) VALUES('"} + fill_next_key + "', '"
        + lo + "'), ('" + fill_end_key + "', '" + hi + "')")
           .c_str());
}

/// Schema 6's search table (keyed by the rows' rowids) is renamed, its
/// triggers dropped: a DROP of it reads every page it has (about 1.8 s at
/// 1M threads), so it is left to the fill's first step, behind the lists.
void thread_index::set_aside_search_table_v6() {
  exec("DROP TRIGGER IF EXISTS threads_search_insert");
  exec("DROP TRIGGER IF EXISTS threads_search_update");
  exec("DROP TRIGGER IF EXISTS threads_search_delete");
  statement t{prepare("SELECT 1 FROM sqlite_master WHERE name='threads_search'")};
  bool exists = sqlite3_step(t.s) == SQLITE_ROW;
  sqlite3_reset(t.s);
  if (exists) exec("ALTER TABLE threads_search RENAME TO threads_search_v6");
}

bool thread_index::merge_search(int pages) {
  // A negative count merges across levels too, as 'optimize' does, a step
  // at a time; a step with nothing to merge changes one row (its own).
  auto before = sqlite3_total_changes(db_);
  exec(("INSERT INTO threads_search(threads_search, rank) VALUES('merge', "
        + std::to_string(-pages) + ")")
           .c_str());
  return sqlite3_total_changes(db_) - before >= 2;
}

size_t thread_index::fill_search(size_t rows) {
  if (old_search_table_) {  // an upgrade from schema 6: its table goes first
    exec("DROP TABLE IF EXISTS threads_search_v6");
    old_search_table_ = false;
    return 0;
  }
  if (search_ready_) return 0;
  auto meta_int = [&](const char* key) {
    statement s{prepare(std::string{"SELECT value FROM meta WHERE key='"} + key + "'")};
    return sqlite3_step(s.s) == SQLITE_ROW ? std::stoll(text(s.s, 0)) : int64_t{0};
  };
  size_t filled = 0;
  batch([&] {
    int64_t next = meta_int(fill_next_key);
    int64_t end = meta_int(fill_end_key);
    // The last rowid of this chunk: `rows` rows on (rowids have gaps).
    int64_t upto = 0;
    {
      statement last{prepare("SELECT max(rowid), count(*) FROM (SELECT rowid FROM threads"
                             " WHERE rowid >= ? AND rowid <= ? ORDER BY rowid LIMIT ?)")};
      sqlite3_bind_int64(last.s, 1, next);
      sqlite3_bind_int64(last.s, 2, end);
      sqlite3_bind_int64(last.s, 3, static_cast<int64_t>(rows));
      if (sqlite3_step(last.s) != SQLITE_ROW || sqlite3_column_type(last.s, 0) == SQLITE_NULL) {
        exec("DELETE FROM meta WHERE key IN ('search_fill_next', 'search_fill_end')");
        search_ready_ = true;
        return;
      }
      upto = sqlite3_column_int64(last.s, 0);
      filled = static_cast<size_t>(sqlite3_column_int64(last.s, 1));
    }
    statement fill{prepare("INSERT OR REPLACE INTO threads_search(rowid, preview, name) SELECT "
                           + search_key("") + ", preview, name FROM threads"
                           " WHERE rowid >= ? AND rowid <= ?")};
    sqlite3_bind_int64(fill.s, 1, next);
    sqlite3_bind_int64(fill.s, 2, upto);
    if (sqlite3_step(fill.s) != SQLITE_DONE) fail(db_, "fill the search table");
    exec((std::string{"UPDATE meta SET value='"} + std::to_string(upto + 1) + "' WHERE key='"
          + fill_next_key + "'")
             .c_str());
  });
  return filled;
}

thread_index::~thread_index() {
  sqlite3_finalize(upsert_);
  sqlite3_finalize(find_);
  sqlite3_finalize(file_of_);
  sqlite3_finalize(remove_);
  sqlite3_finalize(set_file_);
  sqlite3_close(db_);
}

void thread_index::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error(std::string{"thread index: "} + sql + ": " + msg);
  }
}

sqlite3_stmt* thread_index::prepare(const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) fail(db_, sql);
  return s;
}

void thread_index::upsert(const index_entry& e) {
  auto* s = upsert_;
  sqlite3_reset(s);
  bind_text(s, 1, e.id);
  bind_text(s, 2, e.path);
  bind_text(s, 3, e.cwd);
  bind_text(s, 4, e.preview);
  bind_opt(s, 5, e.name);
  sqlite3_bind_int64(s, 6, e.created_at);
  sqlite3_bind_int64(s, 7, e.updated_at);
  sqlite3_bind_int(s, 8, e.archived ? 1 : 0);
  bind_opt(s, 9, e.forked_from);
  bind_text(s, 10, e.source);
  bind_text(s, 11, e.model_provider);
  bind_opt(s, 12, e.model);
  sqlite3_bind_int64(s, 13, e.file_mtime_ns);
  sqlite3_bind_int64(s, 14, e.file_size);
  sqlite3_bind_int(s, 15, e.pending);
  sqlite3_bind_int64(s, 16, e.deadline_ms);
  bind_opt(s, 17, e.git_info);
  sqlite3_bind_int64(s, 18, e.file_inode);
  bind_text(s, 19, tenant_or_default(e.tenant));
  if (sqlite3_step(s) != SQLITE_DONE) fail(db_, "upsert " + e.id);
}

void thread_index::set_file(const std::string& id, const std::string& path, int64_t size,
                            int64_t mtime_ns, int64_t inode) {
  auto* s = set_file_;
  sqlite3_reset(s);
  sqlite3_bind_int64(s, 1, size);
  sqlite3_bind_int64(s, 2, mtime_ns);
  sqlite3_bind_int64(s, 3, inode);
  bind_text(s, 4, id);
  bind_text(s, 5, path);
  if (sqlite3_step(s) != SQLITE_DONE) fail(db_, "set_file " + id);
}

void thread_index::remove(const std::string& id) {
  sqlite3_reset(remove_);
  bind_text(remove_, 1, id);
  if (sqlite3_step(remove_) != SQLITE_DONE) fail(db_, "remove " + id);
}

int pending_code(const std::optional<action_record>& a) {
  if (!a) return 0;
  // A question, and an MCP tool call's approval (asked as an elicitation):
  // the thread waits on user input.
  if (a->at == action_record::phase::asked
      && (a->request == "userInput" || a->request == "mcpToolCall"))
    return question_asked_code;
  if (a->at == action_record::phase::asked && a->request == "dynamicToolCall")
    return tool_call_asked_code;
  return 1 + static_cast<int>(a->at);
}

std::optional<action_record::phase> phase_of_code(int code) {
  if (code == question_asked_code || code == tool_call_asked_code)
    return action_record::phase::asked;
  if (code < 1 || code > 3) return std::nullopt;
  return static_cast<action_record::phase>(code - 1);
}

std::vector<pending_entry> thread_index::pending() {
  statement st{prepare("SELECT id, pending, deadline_ms FROM threads WHERE pending != 0")};
  std::vector<pending_entry> out;
  while (sqlite3_step(st.s) == SQLITE_ROW)
    out.push_back({text(st.s, 0), sqlite3_column_int(st.s, 1), sqlite3_column_int64(st.s, 2)});
  return out;
}

std::optional<index_entry> thread_index::find(const std::string& id) {
  sqlite3_reset(find_);
  bind_text(find_, 1, id);
  std::optional<index_entry> out;
  if (sqlite3_step(find_) == SQLITE_ROW) out = read_row(find_);
  // Reset at once: a statement left on its row keeps its read open, and
  // SQLite refuses a DROP TABLE (the upgrade's) while one is.
  sqlite3_reset(find_);
  return out;
}

std::optional<indexed_file> thread_index::file_of(const std::string& id) {
  sqlite3_reset(file_of_);
  bind_text(file_of_, 1, id);
  if (sqlite3_step(file_of_) != SQLITE_ROW) return std::nullopt;
  indexed_file f;
  f.rowid = sqlite3_column_int64(file_of_, 0);
  f.path = text(file_of_, 1);
  f.file_size = sqlite3_column_int64(file_of_, 2);
  f.file_mtime_ns = sqlite3_column_int64(file_of_, 3);
  f.file_inode = sqlite3_column_int64(file_of_, 4);
  sqlite3_reset(file_of_);  // as find()
  return f;
}

list_page thread_index::list(const list_query& q) {
  // A term the search table can answer. In the default order (created_at,
  // newest first: the table's own) its hits are walked until a page is
  // full. In another: first the scan of the first search_probe_rows rows in
  // list order (a common term fills a page among them, as fast as before
  // the table); then, with few enough hits, the lookup; else the whole scan.
  std::string phrase;
  last_search_hits_ = 0;
  if (q.search && search_ready_ && utf8_chars(*q.search) >= search_lookup_min_chars
      && q.search->find('\0') == std::string::npos) {
    phrase = fts_phrase(*q.search);
    if (q.key == list_query::sort_key::created_at && q.descending) {
      if (auto page = walk_hits(q, phrase)) {
        last_search_plan_ = search_plan::lookup;
        return std::move(*page);
      }
      last_search_plan_ = search_plan::scan;  // few hits pass the filters: scan
      return list_by(q, list_plan::scan, "");
    }
    auto page = list_by(q, list_plan::probe, "");
    if (page.next_cursor) {  // more matches than a page among them: the page is theirs
      last_search_plan_ = search_plan::scan;
      return page;
    }
    // The hits once (the phrase's match is most of a lookup's cost), as a
    // JSON array the lookup reads back with json_each.
    auto hits = search_hits(phrase, search_lookup_max_hits + 1);
    if (!hits.empty() && hits.size() <= search_lookup_max_hits) {
      last_search_plan_ = search_plan::lookup;
      std::string ids = "[";
      for (auto h : hits) ids += (ids.size() > 1 ? "," : "") + std::to_string(h);
      return list_by(q, list_plan::lookup, ids + "]");
    }
    if (hits.empty()) {
      last_search_plan_ = search_plan::lookup;
      return {};
    }
  }
  last_search_plan_ = q.search ? search_plan::scan : search_plan::none;
  return list_by(q, list_plan::scan, "");
}

std::vector<int64_t> thread_index::search_hits(const std::string& phrase, size_t at_most) {
  // FTS5 yields hits in key order and stops at the limit.
  statement c{prepare("SELECT rowid FROM threads_search WHERE threads_search MATCH ? LIMIT ?")};
  bind_text(c.s, 1, phrase);
  sqlite3_bind_int64(c.s, 2, static_cast<int64_t>(at_most));
  std::vector<int64_t> out;
  int rc = 0;
  while ((rc = sqlite3_step(c.s)) == SQLITE_ROW)
    out.push_back(rowid_of_key(sqlite3_column_int64(c.s, 0)));
  if (rc != SQLITE_DONE) fail(db_, "the hits of a search");
  return out;
}

std::optional<list_page> thread_index::walk_hits(const list_query& q, const std::string& phrase) {
  const uint32_t limit = q.limit == 0 ? 25 : q.limit;
  // After a cursor, from the first key of its second on (the cursor's own
  // condition, in the lookup, drops what is at or before it).
  int64_t from = std::numeric_limits<int64_t>::min();
  int64_t cursor_value = 0;
  std::string cursor_id;
  if (q.cursor && decode_cursor(*q.cursor, cursor_value, cursor_id))
    from = -((search_second(cursor_value) << 32) + 4294967295LL);
  statement hits{prepare("SELECT rowid FROM threads_search WHERE threads_search MATCH ?"
                         " AND rowid >= ? ORDER BY rowid")};
  bind_text(hits.s, 1, phrase);
  sqlite3_bind_int64(hits.s, 2, from);
  auto newer = [](const index_entry& a, const index_entry& b) {
    return a.created_at != b.created_at ? a.created_at > b.created_at : a.id > b.id;
  };
  std::vector<index_entry> found;  // the best limit + 1 so far, in list order
  std::optional<int64_t> last_second;  // found[limit]'s, once a page and one more matched
  std::string batch;
  size_t in_batch = 0, read = 0, batch_size = limit + 1;
  // A batch of hits: each row read by rowid, filtered and rechecked (the
  // lookup), merged into the best so far.
  auto resolve = [&] {
    if (in_batch == 0) return;
    auto rows = rows_by(q, list_plan::lookup, batch + "]");
    batch.clear();
    in_batch = 0;
    found.insert(found.end(), std::make_move_iterator(rows.begin()),
                 std::make_move_iterator(rows.end()));
    std::sort(found.begin(), found.end(), newer);
    if (found.size() > limit + 1) found.resize(limit + 1);
    if (found.size() > limit) last_second = search_second(found[limit].created_at);
  };
  int rc = 0;
  while ((rc = sqlite3_step(hits.s)) == SQLITE_ROW) {
    int64_t key = sqlite3_column_int64(hits.s, 0);
    // Every hit from here on was created in an earlier second than the
    // page's one more: the page is whole. (Hits of that same second may
    // still sort before it, by id: those are read.)
    if (last_second && second_of_key(key) < *last_second) break;
    if (++read > search_lookup_max_hits) {
      last_search_hits_ = read;
      return std::nullopt;
    }
    batch += (in_batch ? "," : "[") + std::to_string(rowid_of_key(key));
    if (++in_batch == batch_size) {
      resolve();
      // What is still missing, twice over (filters, and a cursor's own
      // second read again), 16 at least, 512 at most: a page after a
      // cursor reads about a page of rows, not three.
      size_t missing = found.size() > limit ? 0 : limit + 1 - found.size();
      batch_size = std::clamp<size_t>(missing * 2, 16, 512);
    }
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) fail(db_, "the hits of a search");
  resolve();
  last_search_hits_ = read;
  list_page page;
  page.entries = std::move(found);
  if (page.entries.size() > limit) {
    page.entries.pop_back();
    const auto& last = page.entries.back();
    page.next_cursor = encode_cursor(last.created_at, last.id);
  }
  return page;
}

list_page thread_index::list_by(const list_query& q, list_plan plan, const std::string& hits) {
  uint32_t limit = q.limit == 0 ? 25 : q.limit;
  list_page page;
  page.entries = rows_by(q, plan, hits);
  if (page.entries.size() > limit) {
    page.entries.pop_back();
    const auto& last = page.entries.back();
    page.next_cursor = encode_cursor(
        q.key == list_query::sort_key::created_at ? last.created_at : last.updated_at, last.id);
  }
  return page;
}

std::vector<index_entry> thread_index::rows_by(const list_query& q, list_plan plan,
                                               const std::string& hits) {
  const char* key = q.key == list_query::sort_key::created_at ? "created_at" : "updated_at";
  std::string order = std::string{" ORDER BY "} + key + (q.descending ? " DESC" : " ASC") + ", id"
                      + (q.descending ? " DESC" : " ASC");
  // Every filter but the search term.
  std::string where = "archived=?";
  int64_t cursor_value = 0;
  std::string cursor_id;
  bool has_cursor = q.cursor && decode_cursor(*q.cursor, cursor_value, cursor_id);
  if (has_cursor)
    where += std::string{" AND ("} + key + (q.descending ? " < ?" : " > ?") + " OR (" + key
             + " = ? AND id" + (q.descending ? " < ?" : " > ?") + "))";
  auto in = [&](const char* column, const std::vector<std::string>& values) {
    if (values.empty()) return;
    where += std::string{" AND "} + column + " IN (";
    for (size_t i = 0; i < values.size(); ++i) where += i ? ",?" : "?";
    where += ")";
  };
  in("cwd", q.cwds);
  in("model_provider", q.model_providers);
  in("source", q.sources);
  if (q.tenant) where += " AND tenant = ?";
  // The match the search table's hits are rechecked with, and that the scan
  // applies alone.
  const char* match = " AND (instr(lower(preview), lower(?)) > 0"
                      " OR instr(lower(coalesce(name,'')), lower(?)) > 0)";
  std::string sql = std::string{"SELECT "} + columns;
  switch (plan) {
    case list_plan::scan:  // the rows in list order until a page matches
      sql += " FROM threads WHERE " + where + (q.search ? match : "");
      break;
    case list_plan::lookup:  // the hits, each row by rowid, filtered, rechecked, sorted
      sql += " FROM (SELECT value AS hit FROM json_each(?)) AS hits CROSS JOIN threads"
             " ON threads.rowid = hits.hit WHERE "
             + where + match;
      break;
    case list_plan::probe:  // the first rows in list order (the index alone), then the match
      sql += " FROM (SELECT rowid AS hit FROM threads WHERE " + where + order
             + " LIMIT ?) AS hits CROSS JOIN threads ON threads.rowid = hits.hit WHERE 1"
             + match;
      break;
  }
  sql += order + " LIMIT ?";
  statement st{prepare(sql)};
  int i = 1;
  if (plan == list_plan::lookup) bind_text(st.s, i++, hits);
  sqlite3_bind_int(st.s, i++, q.archived ? 1 : 0);
  if (has_cursor) {
    sqlite3_bind_int64(st.s, i++, cursor_value);
    sqlite3_bind_int64(st.s, i++, cursor_value);
    bind_text(st.s, i++, cursor_id);
  }
  for (auto& c : q.cwds) bind_text(st.s, i++, c);
  for (auto& p : q.model_providers) bind_text(st.s, i++, p);
  for (auto& k : q.sources) bind_text(st.s, i++, k);
  if (q.tenant) bind_text(st.s, i++, *q.tenant);
  if (plan == list_plan::probe) sqlite3_bind_int64(st.s, i++, search_probe_rows);
  if (q.search) {
    bind_text(st.s, i++, *q.search);
    bind_text(st.s, i++, *q.search);
  }
  uint32_t limit = q.limit == 0 ? 25 : q.limit;
  sqlite3_bind_int64(st.s, i++, static_cast<int64_t>(limit) + 1);  // one more: is there a next page?
  std::vector<index_entry> rows;
  int rc = 0;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) rows.push_back(read_row(st.s));
  if (rc != SQLITE_DONE) fail(db_, "a page of the list");
  return rows;
}

std::vector<index_entry> thread_index::updated_before(int64_t cutoff_s, bool archived_only,
                                                      bool idle_only, size_t limit,
                                                      const std::optional<std::string>& tenant) {
  // archived IN (...) keeps it on threads_by_updated (archived, updated_at,
  // id), or with a tenant on threads_by_tenant_updated.
  statement st{prepare(std::string{"SELECT "} + columns + " FROM threads WHERE archived IN ("
                       + (archived_only ? "1" : "0,1") + ")"
                       + (tenant ? " AND tenant = ?3" : "") + " AND updated_at < ?1"
                       + (idle_only ? " AND pending = 0" : "")
                       // Sorted only when all are asked: a limited round takes any, unsorted
                       // (no sort of every old row).
                       + (limit == 0 ? " ORDER BY updated_at" : "") + " LIMIT ?2")};
  sqlite3_bind_int64(st.s, 1, cutoff_s);
  sqlite3_bind_int64(st.s, 2, limit == 0 ? -1 : static_cast<int64_t>(limit));
  if (tenant) bind_text(st.s, 3, tenant_or_default(*tenant));
  std::vector<index_entry> out;
  while (sqlite3_step(st.s) == SQLITE_ROW) out.push_back(read_row(st.s));
  return out;
}

std::vector<index_entry> thread_index::all() {
  statement st{prepare(std::string{"SELECT "} + columns + " FROM threads")};
  std::vector<index_entry> out;
  while (sqlite3_step(st.s) == SQLITE_ROW) out.push_back(read_row(st.s));
  return out;
}

std::vector<indexed_path> thread_index::paths_after(const std::string& after, size_t limit) {
  statement st{prepare("SELECT rowid, id, path FROM threads WHERE id > ? ORDER BY id LIMIT ?")};
  bind_text(st.s, 1, after);
  sqlite3_bind_int64(st.s, 2, static_cast<sqlite3_int64>(limit));
  std::vector<indexed_path> out;
  while (sqlite3_step(st.s) == SQLITE_ROW)
    out.push_back({sqlite3_column_int64(st.s, 0), text(st.s, 1), text(st.s, 2)});
  return out;
}

size_t thread_index::size() {
  statement st{prepare("SELECT count(*) FROM threads")};
  return sqlite3_step(st.s) == SQLITE_ROW ? static_cast<size_t>(sqlite3_column_int64(st.s, 0)) : 0;
}

}  // namespace parley::store
