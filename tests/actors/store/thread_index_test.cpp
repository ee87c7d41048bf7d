#include "actors/store/thread_index.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <memory>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

namespace parley::store {
namespace {

std::string temp_db(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("parley-index-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / name).string();
  for (auto suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

index_entry entry(int i) {
  index_entry e;
  e.id = "id-" + std::string(i < 10 ? "0" : "") + std::to_string(i);
  e.path = "/p/" + e.id;
  e.cwd = i % 2 ? "/odd" : "/even";
  e.preview = i == 7 ? "find the Needle" : "hay";
  e.created_at = 1000 + i / 3;  // ties on purpose
  e.updated_at = 5000 - i;
  e.model_provider = "parley";
  return e;
}

TEST(thread_index, pages_in_order_with_ties_broken_by_id) {
  thread_index idx{temp_db("order.sqlite")};
  for (int i = 0; i < 20; ++i) idx.upsert(entry(i));
  EXPECT_EQ(idx.size(), 20u);
  for (bool desc : {true, false}) {
    list_query q;
    q.descending = desc;
    q.limit = 6;
    std::vector<index_entry> seen;
    for (int pages = 0; pages < 10; ++pages) {
      auto page = idx.list(q);
      seen.insert(seen.end(), page.entries.begin(), page.entries.end());
      if (!page.next_cursor) break;
      q.cursor = page.next_cursor;
    }
    ASSERT_EQ(seen.size(), 20u);
    for (size_t i = 1; i < seen.size(); ++i) {
      auto a = std::make_pair(seen[i - 1].created_at, seen[i - 1].id);
      auto b = std::make_pair(seen[i].created_at, seen[i].id);
      EXPECT_TRUE(desc ? a > b : a < b);
    }
  }
}

void exec_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// An index another version wrote is rebuilt, not refused: a start after an
// upgrade found "DROP TABLE ...: database table is locked" (the version's
// read was still running) and served no list at all.
TEST(thread_index, an_index_of_another_version_is_emptied_for_a_rebuild) {
  auto path = temp_db("version.sqlite");
  {
    thread_index idx{path};
    for (int i = 0; i < 3; ++i) idx.upsert(entry(i));
    ASSERT_EQ(idx.size(), 3u);
  }
  exec_sql(path, "UPDATE meta SET value='3' WHERE key='schema_version'");
  std::unique_ptr<thread_index> reopened;
  ASSERT_NO_THROW(reopened = std::make_unique<thread_index>(path));
  EXPECT_TRUE(reopened->created()) << "the rows of another version are rebuilt";
  EXPECT_EQ(reopened->size(), 0u);
  reopened->upsert(entry(5));
  EXPECT_EQ(reopened->size(), 1u);
}

// Version 4 (before tenants) gains the tenant column and keeps its rows:
// threads stored before tenants are the default tenant's.
TEST(thread_index, an_index_from_before_tenants_keeps_its_rows) {
  auto path = temp_db("v4.sqlite");
  {
    thread_index idx{path};
    for (int i = 0; i < 3; ++i) idx.upsert(entry(i));
  }
  exec_sql(path,
           "DROP INDEX threads_by_tenant_created; DROP INDEX threads_by_tenant_updated;"
           " ALTER TABLE threads DROP COLUMN tenant;"
           " UPDATE meta SET value='4' WHERE key='schema_version'");
  thread_index idx{path};
  EXPECT_FALSE(idx.created());
  EXPECT_EQ(idx.size(), 3u);
  auto e = idx.find(entry(1).id);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->tenant, "default");
}

// The reconcile's lookups: a row's file columns and rowid alone (file_of),
// and the sweep's pages (paths_after) with the same rowids.
TEST(thread_index, file_of_and_paths_after_name_the_row) {
  thread_index idx{temp_db("file-of.sqlite")};
  for (int i = 0; i < 5; ++i) idx.upsert(entry(i));
  idx.set_file("id-03", "/p/id-03", 11, 22, 33);
  auto f = idx.file_of("id-03");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->path, "/p/id-03");
  EXPECT_EQ(f->file_size, 11);
  EXPECT_EQ(f->file_mtime_ns, 22);
  EXPECT_EQ(f->file_inode, 33);
  EXPECT_FALSE(idx.file_of("id-99"));
  auto page = idx.paths_after("id-01", 2);
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].id, "id-02");
  EXPECT_EQ(page[1].path, "/p/id-03");
  EXPECT_EQ(page[1].rowid, f->rowid);
  EXPECT_NE(page[0].rowid, page[1].rowid);
}

TEST(thread_index, filters) {
  thread_index idx{temp_db("filters.sqlite")};
  for (int i = 0; i < 20; ++i) idx.upsert(entry(i));
  auto archived = entry(3);
  archived.archived = true;
  idx.upsert(archived);
  list_query q;
  q.limit = 100;
  EXPECT_EQ(idx.list(q).entries.size(), 19u);
  q.archived = true;
  EXPECT_EQ(idx.list(q).entries.size(), 1u);
  q.archived = false;
  q.search = "needle";
  ASSERT_EQ(idx.list(q).entries.size(), 1u);
  EXPECT_EQ(idx.list(q).entries[0].id, "id-07");
  q.search.reset();
  q.cwds = {"/odd"};
  EXPECT_EQ(idx.list(q).entries.size(), 9u);  // 10 odd minus the archived one
  q.cwds.clear();
  q.key = list_query::sort_key::updated_at;
  q.descending = true;
  EXPECT_EQ(idx.list(q).entries.front().id, "id-00");
  idx.remove("id-00");
  EXPECT_FALSE(idx.find("id-00"));
  EXPECT_EQ(idx.find("id-01")->path, "/p/id-01");
}

TEST(thread_index, cursors) {
  int64_t v = 0;
  std::string id;
  EXPECT_TRUE(decode_cursor(encode_cursor(42, "abc:def"), v, id));
  EXPECT_EQ(v, 42);
  EXPECT_EQ(id, "abc:def");
  EXPECT_FALSE(decode_cursor("garbage", v, id));
  EXPECT_FALSE(decode_cursor("12x:abc", v, id));
}


// -- searchTerm: the search table (trigram FTS5) and the scan ---------------

// What the scan matched, and so what every search must match: the term in
// the preview or the name, ASCII letters in either case, every other
// character as it is (memory_store and postgres_rows match the same way).
bool reference_match(const index_entry& e, const std::string& term) {
  auto lower = [](std::string s) {
    for (auto& c : s)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
  };
  auto t = lower(term);
  return lower(e.preview).find(t) != std::string::npos
         || (e.name && lower(*e.name).find(t) != std::string::npos);
}

/// The ids a search must list, newest first (created_at, then id).
std::vector<std::string> expected_ids(const std::map<std::string, index_entry>& rows,
                                      const std::string& term, bool archived = false) {
  std::vector<const index_entry*> hits;
  for (auto& [id, e] : rows)
    if (e.archived == archived && reference_match(e, term)) hits.push_back(&e);
  std::sort(hits.begin(), hits.end(), [](auto* a, auto* b) {
    return std::make_pair(a->created_at, a->id) > std::make_pair(b->created_at, b->id);
  });
  std::vector<std::string> out;
  for (auto* e : hits) out.push_back(e->id);
  return out;
}

/// Every page of `q`, following the cursors; `plans` gets each page's plan.
std::vector<std::string> all_pages(thread_index& idx, list_query q,
                                   std::vector<thread_index::search_plan>* plans = nullptr) {
  std::vector<std::string> out;
  for (int pages = 0; pages < 10000; ++pages) {
    auto page = idx.list(q);
    if (plans) plans->push_back(idx.last_search_plan());
    for (auto& e : page.entries) out.push_back(e.id);
    if (!page.next_cursor) break;
    q.cursor = page.next_cursor;
  }
  return out;
}

index_entry text_entry(int i, const std::string& preview,
                       std::optional<std::string> name = std::nullopt) {
  index_entry e = entry(i);
  e.id = "t-" + std::to_string(10000 + i);
  e.path = "/p/" + e.id;
  e.preview = preview;
  e.name = std::move(name);
  // Real times (the search table keys by the second since 2020), two
  // threads a second: ties broken by id.
  e.created_at = 1765000000 + i / 2;
  return e;
}

const std::vector<std::string>& search_texts() {
  static const std::vector<std::string> texts = {
      "fix the 100% CPU bug", "rename a_b to a-b", "it's \"quoted\" text", "say \"hi\" twice",
      "glob * and a*b", "key:value pairs", "^start and (parens)", "NEAR(a b) AND OR NOT",
      "École d'été", "école", "中文字符测试", "emoji 🎉 party", "under_score%percent",
      "plain hay", "Needle in CAPS", "needle lower", "x", "", "ab", "tab\there"};
  return texts;
}

const std::vector<std::string>& search_terms() {
  static const std::vector<std::string> terms = {
      "100%", "%", "_", "a_b", "'s \"q", "\"hi\"", "\"", "*", "a*b", "key:", ":", "^st",
      "(parens)", "(", "NEAR(", "AND", "and or", "École", "ÉCOLE", "école", "cole", "中文字",
      "中文", "🎉", "🎉 p", "needle", "NEEDLE", "ne", "N", "hay", "d'é", "ab", "b\th", "zzz",
      "named", "NAME ONLY", "-b", "  "};
  return terms;
}

std::map<std::string, index_entry> fill_texts(thread_index& idx) {
  std::map<std::string, index_entry> rows;
  int i = 0;
  for (auto& t : search_texts()) {
    auto e = text_entry(i++, t);
    rows[e.id] = e;
  }
  // Found by the name alone.
  auto named = text_entry(i++, "hay", std::string{"a Named one, name only"});
  rows[named.id] = named;
  idx.batch([&] {
    for (auto& [id, e] : rows) idx.upsert(e);
  });
  return rows;
}

size_t chars(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Every term matches what the scan matched: the characters FTS5 gives a
// meaning to (`"*:^()`, AND, NEAR) and SQL's LIKE wildcards (`%`, `_`) as
// they are, ASCII case folded, other letters only as they are (`ÉCOLE`
// finds `École` but not `école`: the trigram table folds them, the recheck
// does not). Terms of 3+ characters are looked up, shorter ones scan.
TEST(thread_index_search, terms_match_as_the_scan_did) {
  thread_index idx{temp_db("search-terms.sqlite")};
  auto rows = fill_texts(idx);
  ASSERT_TRUE(idx.search_ready());
  for (auto& term : search_terms()) {
    list_query q;
    q.search = term;
    q.limit = 3;
    std::vector<thread_index::search_plan> plans;
    EXPECT_EQ(all_pages(idx, q, &plans), expected_ids(rows, term)) << "term [" << term << "]";
    auto want = chars(term) >= search_lookup_min_chars ? thread_index::search_plan::lookup
                                                       : thread_index::search_plan::scan;
    for (auto p : plans) EXPECT_EQ(p, want) << "term [" << term << "]";
  }
  list_query q;
  q.search = "ÉCOLE";
  auto page = idx.list(q);
  ASSERT_EQ(page.entries.size(), 1u);
  EXPECT_EQ(page.entries[0].preview, "École d'été");
}

// A rare term's pages follow the cursor across pages, in list order, with
// the other filters, and a thread inserted between pages shifts nothing.
TEST(thread_index_search, lookup_pages_with_a_cursor_and_filters) {
  thread_index idx{temp_db("search-pages.sqlite")};
  std::map<std::string, index_entry> rows;
  // 1 in 200 (too few among the newest 512 rows for the first scan).
  for (int i = 0; i < 2400; ++i) {
    auto e = text_entry(i, "hello bench " + std::to_string(i) + " topic" + std::to_string(i % 200));
    e.cwd = i % 3 ? "/a" : "/b";
    e.archived = i % 7 == 0;
    rows[e.id] = e;
  }
  idx.batch([&] {
    for (auto& [id, e] : rows) idx.upsert(e);
  });
  list_query q;
  q.search = "TOPIC42";
  q.limit = 3;
  std::vector<thread_index::search_plan> plans;
  EXPECT_EQ(all_pages(idx, q, &plans), expected_ids(rows, "topic42"));
  EXPECT_GT(plans.size(), 3u);
  for (auto p : plans) EXPECT_EQ(p, thread_index::search_plan::lookup);
  q.archived = true;
  EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "topic42", true));
  q.archived = false;
  q.cwds = {"/b"};
  std::vector<std::string> want;
  for (auto& id : expected_ids(rows, "topic42"))
    if (rows[id].cwd == "/b") want.push_back(id);
  EXPECT_EQ(all_pages(idx, q), want);
  q.cwds.clear();
  // Ascending by updated_at (5000 - i: the newest created first).
  q.key = list_query::sort_key::updated_at;
  q.descending = false;
  EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "topic42"));
  // Inserted between pages: a newer thread does not shift the next page.
  q.key = list_query::sort_key::created_at;
  q.descending = true;
  auto first = idx.list(q);
  ASSERT_TRUE(first.next_cursor);
  auto newer = text_entry(5000, "a newer topic42 thread");
  idx.upsert(newer);
  std::vector<std::string> seen;
  for (auto& e : first.entries) seen.push_back(e.id);
  q.cursor = first.next_cursor;
  for (auto& id : all_pages(idx, q)) seen.push_back(id);
  EXPECT_EQ(seen, expected_ids(rows, "topic42"));
}

// In the default order (created_at, newest first) a term's hits are
// walked newest first: a common one reads a page of hits and one batch
// more, not all of them. In another order a term with more hits than the
// lookup takes scans (it finds a page at once), as does a term with a page
// of hits among the newest rows (the first scan's); both list the same.
TEST(thread_index_search, a_common_term_reads_a_page_of_hits) {
  thread_index idx{temp_db("search-common.sqlite")};
  std::map<std::string, index_entry> rows;
  for (int i = 0; i < static_cast<int>(search_lookup_max_hits) + 50; ++i) {
    auto e = text_entry(i, i % 2 ? "common word " + std::to_string(i) : "Common " + std::to_string(i));
    rows[e.id] = e;
  }
  idx.batch([&] {
    for (auto& [id, e] : rows) idx.upsert(e);
  });
  list_query q;
  q.search = "common";
  q.limit = 50;
  auto page = idx.list(q);
  EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::lookup);
  EXPECT_LE(idx.last_search_hits(), 51u + 2) << "a page and one more, and their second's ties";
  auto want = expected_ids(rows, "common");
  want.resize(50);
  std::vector<std::string> got;
  for (auto& e : page.entries) got.push_back(e.id);
  EXPECT_EQ(got, want);
  // Page after page, each a walk from its cursor.
  std::vector<thread_index::search_plan> plans;
  q.limit = 97;
  EXPECT_EQ(all_pages(idx, q, &plans), expected_ids(rows, "common"));
  for (auto p : plans) EXPECT_EQ(p, thread_index::search_plan::lookup);
  EXPECT_LE(idx.last_search_hits(), 98u + 2);
  // updated_at: the scan for more than the lookup takes.
  q.key = list_query::sort_key::updated_at;
  q.descending = false;  // updated_at = 5000 - i: the newest created first
  q.limit = 50;
  page = idx.list(q);
  EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::scan);
  got.clear();
  for (auto& e : page.entries) got.push_back(e.id);
  EXPECT_EQ(got, want);
  // 1, 11, 13, 15, ..., 1999: under the bound, but dense among the newest
  // rows: the first scan finds a page of 50 there.
  q.search = "common word 1";
  page = idx.list(q);
  EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::scan);
  EXPECT_EQ(page.entries.size(), 50u);
  q.limit = 10000;
  EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "common word 1"));
  EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::lookup);
}

// The walk's order is the list's although the search table keys a second's
// threads by rowid, not id: many threads of one second, inserted in an
// order unlike their ids, page by id across batches and pages; threads of
// before 2020 (one key second for all) too; a thread whose created_at
// changes moves in the table.
TEST(thread_index_search, a_walk_keeps_the_list_order_within_a_second) {
  thread_index idx{temp_db("search-ties.sqlite")};
  std::map<std::string, index_entry> rows;
  idx.batch([&] {
    for (int i = 0; i < 700; ++i) {
      int n = (i * 389) % 700;  // ids out of insertion (rowid) order
      auto e = text_entry(n, "tie " + std::to_string(n) + (n % 3 ? " kept" : ""));
      e.created_at = n < 300 ? 1765000500 : n < 400 ? 1000 + n % 7 : 1765000000 + n;
      rows[e.id] = e;
      idx.upsert(e);
    }
  });
  list_query q;
  q.search = "kept";
  for (uint32_t limit : {1u, 7u, 50u, 299u, 1000u}) {
    q.limit = limit;
    std::vector<thread_index::search_plan> plans;
    EXPECT_EQ(all_pages(idx, q, &plans), expected_ids(rows, "kept")) << "limit " << limit;
    for (auto p : plans) EXPECT_EQ(p, thread_index::search_plan::lookup);
  }
  auto moved = rows.at("t-10450");
  moved.created_at = 1765000500;  // into the crowded second
  idx.upsert(moved);
  rows[moved.id] = moved;
  auto old = rows.at("t-10007");
  old.created_at = 1790000000;  // the newest now
  idx.upsert(old);
  rows[old.id] = old;
  q.limit = 13;
  EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "kept"));
  q.limit = 1;
  auto first = idx.list(q);
  ASSERT_EQ(first.entries.size(), 1u);
  EXPECT_EQ(first.entries[0].id, "t-10007");
  // A thread inserted newer than the cursor shifts nothing.
  q.limit = 40;
  first = idx.list(q);
  auto newer = text_entry(900, "newer kept");
  newer.created_at = 1800000000;
  idx.upsert(newer);
  std::vector<std::string> seen;
  for (auto& e : first.entries) seen.push_back(e.id);
  q.cursor = first.next_cursor;
  for (auto& id : all_pages(idx, q)) seen.push_back(id);
  EXPECT_EQ(seen, expected_ids(rows, "kept"));
}

// Filters that few of a term's hits pass: past search_lookup_max_hits hits
// without a page the walk gives way to the scan, which lists the same.
TEST(thread_index_search, a_walk_gives_way_to_the_scan) {
  thread_index idx{temp_db("search-filtered.sqlite")};
  std::map<std::string, index_entry> rows;
  for (int i = 0; i < static_cast<int>(search_lookup_max_hits) + 300; ++i) {
    auto e = text_entry(i, "needle " + std::to_string(i));
    e.cwd = i % 1000 == 3 ? "/rare" : "/common";
    rows[e.id] = e;
  }
  idx.batch([&] {
    for (auto& [id, e] : rows) idx.upsert(e);
  });
  list_query q;
  q.search = "needle";
  q.cwds = {"/rare"};
  q.limit = 2;
  std::vector<std::string> want;
  for (auto& id : expected_ids(rows, "needle"))
    if (rows[id].cwd == "/rare") want.push_back(id);
  ASSERT_EQ(want.size(), 3u);
  auto page = idx.list(q);
  EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::scan);
  EXPECT_EQ(idx.last_search_hits(), search_lookup_max_hits + 1);
  EXPECT_EQ(all_pages(idx, q), want);
}

// The search table follows the rows in the same transactions: a renamed
// thread is found by its new name only, an archived one only among the
// archived, a deleted one (thread/delete, prune) no more, and a batch
// rolled back leaves neither.
TEST(thread_index_search, follows_renames_archives_and_deletes) {
  thread_index idx{temp_db("search-changes.sqlite")};
  auto rows = fill_texts(idx);
  auto find = [&](const std::string& term, bool archived = false) {
    list_query q;
    q.search = term;
    q.archived = archived;
    auto ids = all_pages(idx, q);
    EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::lookup) << term;
    return ids;
  };
  auto renamed = rows.begin()->second;  // "fix the 100% CPU bug"
  renamed.name = "zebra crossing";
  idx.upsert(renamed);
  EXPECT_EQ(find("zebra"), std::vector<std::string>{renamed.id});
  renamed.name = "giraffe";
  renamed.preview = "a new preview";
  idx.upsert(renamed);
  EXPECT_TRUE(find("zebra").empty());
  EXPECT_TRUE(find("100%").empty());
  EXPECT_EQ(find("giraffe"), std::vector<std::string>{renamed.id});
  EXPECT_EQ(find("new preview"), std::vector<std::string>{renamed.id});
  auto archived = rows.at("t-10015");  // "needle lower"
  ASSERT_EQ(archived.preview, "needle lower");
  archived.archived = true;
  idx.upsert(archived);
  EXPECT_EQ(find("needle lower"), std::vector<std::string>{});
  EXPECT_EQ(find("needle lower", true), std::vector<std::string>{archived.id});
  idx.remove(archived.id);
  EXPECT_TRUE(find("needle", true).empty());
  EXPECT_EQ(find("needle"), std::vector<std::string>{"t-10014"});  // "Needle in CAPS"
  // A file update (no text change) keeps the entry.
  idx.set_file("t-10014", "/p/t-10014", 10, 20, 30);
  EXPECT_EQ(find("needle"), std::vector<std::string>{"t-10014"});
  EXPECT_THROW(idx.batch([&] {
    idx.upsert(text_entry(500, "rolled back okapi"));
    throw std::runtime_error("refused");
  }),
               std::runtime_error);
  EXPECT_TRUE(find("okapi").empty());
  EXPECT_FALSE(idx.find("t-10500"));
}

// An index from before the search table (schema 5) keeps its rows, gains
// the table empty and scans until fill_search has filled it (a chunk at a
// time, going on after a restart); rows written meanwhile are indexed by
// the triggers, deleted ones leave nothing behind.
TEST(thread_index_search, an_index_from_before_the_search_table_is_filled_in_place) {
  auto path = temp_db("search-v5.sqlite");
  std::map<std::string, index_entry> rows;
  {
    thread_index idx{path};
    rows = fill_texts(idx);
  }
  exec_sql(path,
           "DROP TRIGGER threads_search_insert; DROP TRIGGER threads_search_update;"
           " DROP TRIGGER threads_search_delete; DROP TABLE threads_search;"
           " UPDATE meta SET value='5' WHERE key='schema_version'");
  {
    thread_index idx{path};
    EXPECT_FALSE(idx.created());
    EXPECT_FALSE(idx.search_ready());
    EXPECT_EQ(idx.size(), rows.size());
    list_query q;
    q.search = "needle";
    EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "needle"));
    EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::scan);
    EXPECT_EQ(idx.fill_search(4), 4u);
    EXPECT_FALSE(idx.search_ready());
  }
  thread_index idx{path};
  EXPECT_FALSE(idx.search_ready()) << "the fill goes on after a restart";
  // Written during the fill: a new row, a renamed one not filled yet, a
  // deleted one.
  auto fresh = text_entry(900, "fresh needle");
  idx.upsert(fresh);
  rows[fresh.id] = fresh;
  auto& late = rows.at("t-10016");  // "x": past the first chunk
  late.name = "late needle";
  idx.upsert(late);
  idx.remove("t-10014");
  rows.erase("t-10014");
  size_t filled = 4;
  for (int i = 0; i < 100 && !idx.search_ready(); ++i) filled += idx.fill_search(4);
  ASSERT_TRUE(idx.search_ready());
  EXPECT_EQ(filled, rows.size() - 1) << "every row there at the upgrade, once (not the new one)";
  for (auto& term : search_terms()) {
    list_query q;
    q.search = term;
    EXPECT_EQ(all_pages(idx, q), expected_ids(rows, term)) << "term [" << term << "]";
  }
  list_query q;
  q.search = "needle";
  EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "needle"));
  EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::lookup);
  EXPECT_EQ(expected_ids(rows, "needle").size(), 3u);
}

// Schema 6's search table, keyed by the rows' rowids, as that version made
// it (the upgrade test's starting point).
constexpr const char* search_table_v6
    = "DROP TRIGGER threads_search_insert; DROP TRIGGER threads_search_update;"
      " DROP TRIGGER threads_search_delete; DROP TABLE threads_search;"
      " CREATE VIRTUAL TABLE threads_search USING fts5(preview, name, tokenize='trigram');"
      " CREATE TRIGGER threads_search_insert AFTER INSERT ON threads BEGIN"
      " DELETE FROM threads_search WHERE rowid = new.rowid;"
      " INSERT INTO threads_search(rowid, preview, name)"
      " VALUES(new.rowid, new.preview, new.name); END;"
      " CREATE TRIGGER threads_search_update AFTER UPDATE OF preview, name ON threads"
      " WHEN old.preview IS NOT new.preview OR old.name IS NOT new.name BEGIN"
      " DELETE FROM threads_search WHERE rowid = new.rowid;"
      " INSERT INTO threads_search(rowid, preview, name)"
      " VALUES(new.rowid, new.preview, new.name); END;"
      " CREATE TRIGGER threads_search_delete AFTER DELETE ON threads BEGIN"
      " DELETE FROM threads_search WHERE rowid = old.rowid; END;"
      " INSERT INTO threads_search(rowid, preview, name) SELECT rowid, preview, name FROM threads;"
      " UPDATE meta SET value='6' WHERE key='schema_version'";

int64_t count_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* s = nullptr;
  int64_t n = -1;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK
      && sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

// An index of schema 6 keeps its rows; its search table (keyed by rowid) is
// set aside at once and dropped by the fill's first step, the new one is
// filled behind the lists (scans until then) and goes on after a restart,
// before the drop or after it; writes meanwhile are the new triggers'.
TEST(thread_index_search, an_index_of_schema_6_is_filled_again_in_place) {
  auto path = temp_db("search-v6.sqlite");
  std::map<std::string, index_entry> rows;
  {
    thread_index idx{path};
    rows = fill_texts(idx);
  }
  exec_sql(path, search_table_v6);
  ASSERT_EQ(count_sql(path, "SELECT count(*) FROM threads_search WHERE rowid > 0"),
            static_cast<int64_t>(rows.size()));
  {
    thread_index idx{path};
    EXPECT_FALSE(idx.created());
    EXPECT_FALSE(idx.search_ready());
    EXPECT_EQ(idx.size(), rows.size());
    auto renamed = rows.at("t-10015");  // "needle lower": written before the drop
    renamed.name = "renamed needle";
    idx.upsert(renamed);
    rows[renamed.id] = renamed;
    list_query q;
    q.search = "needle";
    EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "needle"));
    EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::scan);
  }
  EXPECT_EQ(count_sql(path, "SELECT count(*) FROM sqlite_master WHERE name='threads_search_v6'"), 1);
  {
    thread_index idx{path};  // a restart before the drop
    // A lookup first, as the start's reconcile makes: it leaves no
    // statement running that would lock the DROP out.
    ASSERT_TRUE(idx.find("t-10015"));
    ASSERT_TRUE(idx.file_of("t-10015"));
    EXPECT_EQ(idx.fill_search(4), 0u) << "the first step drops the old table";
    EXPECT_FALSE(idx.search_ready());
    EXPECT_EQ(idx.fill_search(4), 4u);
  }
  EXPECT_EQ(count_sql(path, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'threads_search_v6%'"),
            0);
  thread_index idx{path};  // a restart mid-fill
  EXPECT_FALSE(idx.search_ready());
  auto fresh = text_entry(900, "fresh needle");
  idx.upsert(fresh);
  rows[fresh.id] = fresh;
  idx.remove("t-10014");
  rows.erase("t-10014");
  for (int i = 0; i < 100 && !idx.search_ready(); ++i) idx.fill_search(4);
  ASSERT_TRUE(idx.search_ready());
  for (auto& term : search_terms()) {
    list_query q;
    q.search = term;
    q.limit = 2;
    EXPECT_EQ(all_pages(idx, q), expected_ids(rows, term)) << "term [" << term << "]";
  }
  list_query q;
  q.search = "needle";
  EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "needle"));
  EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::lookup);
  EXPECT_EQ(expected_ids(rows, "needle").size(), 2u);
  EXPECT_EQ(count_sql(path, "SELECT count(*) FROM threads_search WHERE rowid > 0"), 0)
      << "no entry keyed the old way";
  EXPECT_EQ(count_sql(path, "SELECT count(*) FROM threads_search"),
            static_cast<int64_t>(rows.size()));
  EXPECT_EQ(count_sql(path, "SELECT value FROM meta WHERE key='schema_version'"), 7);
}

// An index of another version is rebuilt with its search table.
TEST(thread_index_search, a_rebuilt_index_has_its_search_table_at_once) {
  auto path = temp_db("search-v3.sqlite");
  {
    thread_index idx{path};
    fill_texts(idx);
  }
  exec_sql(path, "UPDATE meta SET value='3' WHERE key='schema_version'");
  thread_index idx{path};
  EXPECT_TRUE(idx.created());
  EXPECT_TRUE(idx.search_ready());
  auto rows = fill_texts(idx);
  list_query q;
  q.search = "needle";
  EXPECT_EQ(all_pages(idx, q), expected_ids(rows, "needle"));
  EXPECT_EQ(idx.last_search_plan(), thread_index::search_plan::lookup);
}

}  // namespace
}  // namespace parley::store
