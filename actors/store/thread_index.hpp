#pragma once
// The SQLite index of thread metadata: what thread/list and thread/read of
// a thread that is not loaded need, without opening every rollout. The
// rollouts are the truth; the index can always be rebuilt from them.
// Not thread-safe: one owner (the index actor) uses it.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/core/messages.hpp"
#include "protocol/types.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace parley::store {

/// One row: a thread's metadata and where its rollout is.
struct index_entry {
  std::string id;
  std::string path;
  std::string cwd;
  std::string preview;
  std::optional<std::string> name;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  bool archived = false;
  std::optional<std::string> forked_from;
  std::string source = "vscode";
  std::string model_provider;
  std::optional<std::string> model;
  /// The rollout as this entry describes it (index_journal: a start rereads
  /// a journaled rollout only when these differ from the file); a size of -1
  /// is unknown (the entry lags its file: reread after a crash).
  int64_t file_mtime_ns = 0;
  int64_t file_size = 0;
  int64_t file_inode = 0;
  /// The last turn's pending action: 0 none, else 1 + action_record::phase
  /// (asked, decided, started), or for an asked request to a client 5 (a
  /// question: it waits on user input) or 6 (a client tool's call: it waits
  /// on no person), and the asked request's deadline (unix ms).
  int pending = 0;
  int64_t deadline_ms = 0;
  /// The thread's Git metadata (thread/metadata/update) as its JSON text.
  std::optional<std::string> git_info;
  /// The tenant the thread belongs to (empty: stored before tenants, the
  /// default tenant's).
  std::string tenant;
};

/// What a row says of its rollout (the reconcile's check), without the
/// rest of the row, and the row's rowid.
struct indexed_file {
  int64_t rowid = 0;
  std::string path;
  int64_t file_size = 0;
  int64_t file_mtime_ns = 0;
  int64_t file_inode = 0;
};

/// A row's rowid, id and rollout path (the reconcile's sweep).
struct indexed_path {
  int64_t rowid = 0;
  std::string id;
  std::string path;
};

/// index_entry::pending for a pending action (0: none).
int pending_code(const std::optional<action_record>& a);
/// The phase a pending code names (nullopt: none, or unknown).
std::optional<action_record::phase> phase_of_code(int code);
/// The codes of an asked question or MCP tool call approval (the thread
/// waits on user input) and of
/// an asked client tool's call (active, waiting on no person).
constexpr int question_asked_code = 5;
constexpr int tool_call_asked_code = 6;

/// A thread whose last turn has an action pending.
struct pending_entry {
  std::string id;
  int pending = 0;  // as index_entry::pending
  int64_t deadline_ms = 0;
};

/// thread/list parameters, decoded.
struct list_query {
  enum class sort_key { created_at, updated_at };
  sort_key key = sort_key::created_at;
  bool descending = true;
  bool archived = false;
  std::vector<std::string> cwds;             // empty = any
  std::vector<std::string> model_providers;  // empty = any
  std::vector<std::string> sources;          // empty = any (sourceKinds)
  /// A substring of the preview or the name, ASCII letters in either case
  /// (as the memory and PostgreSQL stores match it).
  std::optional<std::string> search;
  std::optional<std::string> cursor;         // from a previous page
  std::optional<std::string> tenant;         // nullopt = every tenant's
  uint32_t limit = 25;
};

struct list_page {
  std::vector<index_entry> entries;
  std::optional<std::string> next_cursor;
};

class thread_index {
 public:
  /// Opens (creating if needed) the index at `path`. Throws on failure.
  explicit thread_index(const std::string& path);
  ~thread_index();
  thread_index(const thread_index&) = delete;
  thread_index& operator=(const thread_index&) = delete;

  /// Whether opening created the table (no index, or one of another
  /// version): it must be built from the rollouts.
  bool created() const { return created_; }

  void upsert(const index_entry& e);
  void remove(const std::string& id);
  /// What thread `id`'s rollout at `path` now is (the entry is unchanged).
  void set_file(const std::string& id, const std::string& path, int64_t size, int64_t mtime_ns,
                int64_t inode);
  std::optional<index_entry> find(const std::string& id);
  /// find()'s file columns alone (a reconcile asks it of every rollout).
  std::optional<indexed_file> file_of(const std::string& id);
  list_page list(const list_query& q);
  /// Every (path, mtime, size) indexed, for the staleness scan.
  std::vector<index_entry> all();
  /// Up to `limit` rows' (rowid, id, path) with ids after `after`, in id
  /// order: a sweep over a million rows a page at a time, never all in memory.
  std::vector<indexed_path> paths_after(const std::string& after, size_t limit);
  /// Threads last updated before `cutoff_s` (retention); with `idle_only`
  /// none with work pending; with `tenant` only that tenant's; at most
  /// `limit` (any of them), or all (0), oldest first.
  std::vector<index_entry> updated_before(int64_t cutoff_s, bool archived_only, bool idle_only,
                                          size_t limit,
                                          const std::optional<std::string>& tenant = std::nullopt);
  /// Every thread with an action pending (a partial index: no scan).
  std::vector<pending_entry> pending();
  size_t size();

  /// Whether the search table (`threads_search`) holds every row, so a
  /// search term of 3+ characters is a lookup in it. An index from before
  /// it (schema 5), or from before its key followed the list (6), gains it
  /// empty and fills it behind the lists (fill_search); until then searches
  /// scan, as they did.
  bool search_ready() const { return search_ready_; }
  /// Fills up to `rows` more rows into the search table in one
  /// transaction; how many it filled (0, and search_ready(), once whole).
  /// After an upgrade from schema 6 its first step drops the old table.
  size_t fill_search(size_t rows);
  /// Merges up to `pages` pages of the search table's segments towards one
  /// (a fill in many small transactions leaves many, which every search
  /// reads); whether more is left to merge.
  bool merge_search(int pages);
  /// How the last list() answered its search term (tests, benchmarks).
  enum class search_plan { none, scan, lookup };
  search_plan last_search_plan() const { return last_search_plan_; }
  /// How many of the search table's hits the last list() walked (the
  /// default order's lookup; 0 otherwise).
  size_t last_search_hits() const { return last_search_hits_; }

  /// Runs `f` in one transaction (bulk rebuilds).
  template <class F>
  void batch(F&& f) {
    exec("BEGIN");
    try {
      f();
      exec("COMMIT");
    } catch (...) {
      // A COMMIT that failed (SQLITE_FULL) may or may not have ended the
      // transaction itself: end it either way, then report.
      try {
        exec("ROLLBACK");
      } catch (...) {
      }
      throw;
    }
  }

 private:
  void open(const std::string& path);
  void exec(const char* sql);
  sqlite3_stmt* prepare(const std::string& sql);
  void create_search_table();
  /// How list() finds a page (list_by).
  enum class list_plan { scan, lookup, probe };
  /// `hits`: the lookup's rowids, a JSON array.
  list_page list_by(const list_query& q, list_plan plan, const std::string& hits);
  /// list_by's rows: up to a page and one more, in list order.
  std::vector<index_entry> rows_by(const list_query& q, list_plan plan, const std::string& hits);
  /// A search in the default order (created_at, newest first: the search
  /// table's key order): its hits a batch at a time, each row read,
  /// filtered and rechecked, until a page and one more matched and every
  /// hit of that one's second is read. nullopt after search_lookup_max_hits
  /// hits without a page (filters few pass): the caller scans.
  std::optional<list_page> walk_hits(const list_query& q, const std::string& phrase);
  /// Sets schema 6's search table aside (upgrade; fill_search drops it).
  void set_aside_search_table_v6();
  /// The rowids of the rows the search table holds `phrase` in, up to
  /// `at_most` of them.
  std::vector<int64_t> search_hits(const std::string& phrase, size_t at_most);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* upsert_ = nullptr;
  sqlite3_stmt* find_ = nullptr;
  sqlite3_stmt* file_of_ = nullptr;
  sqlite3_stmt* remove_ = nullptr;
  sqlite3_stmt* set_file_ = nullptr;
  bool created_ = false;
  bool search_ready_ = true;
  /// Schema 6's search table is still there, renamed (fill_search drops it).
  bool old_search_table_ = false;
  search_plan last_search_plan_ = search_plan::none;
  size_t last_search_hits_ = 0;
};

/// The shortest search term the search table answers (trigrams); shorter
/// ones scan the rows, newest first.
constexpr size_t search_lookup_min_chars = 3;
/// The rows a search in an order other than the default scans first (in
/// list order, the index alone, then each row's text), before it asks the
/// search table: a term in 1 of 10 threads or more fills a page of 50 among
/// them, as fast as the scan alone.
constexpr int64_t search_probe_rows = 512;
/// The most hits of a term the lookup takes (each a row read and sorted),
/// and the most the default order's walk reads without a page; past it the
/// ordered scan is cheaper (it meets a page of hits early).
constexpr size_t search_lookup_max_hits = 2000;

/// The opaque cursor for a list position (sort value + id).
std::string encode_cursor(int64_t sort_value, const std::string& id);
bool decode_cursor(const std::string& cursor, int64_t& sort_value, std::string& id);

}  // namespace parley::store
