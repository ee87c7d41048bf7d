#include "actors/store/thread_index.hpp"

#include <filesystem>
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

}  // namespace
}  // namespace parley::store
