// A whole home checked: every rollout, and the index against them (entries
// that point nowhere, at unreadable or other threads' rollouts, rollouts the
// index lacks); a repair salvages the rollouts and rebuilds the index.

#include "actors/store/store_check.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "actors/core/errors.hpp"
#include "actors/store/local_store.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/thread_index.hpp"
#include "tests/support/app_server_client.hpp"

namespace parley::store {
namespace store_check_test {  // named: the test executables are unity builds

namespace fs = std::filesystem;

const std::string a_id = "019a5c3e-7b10-7c21-9a3d-00000000000a";
const std::string b_id = "019a5c3e-7b10-7c21-9a3d-00000000000b";
const std::string c_id = "019a5c3e-7b10-7c21-9a3d-00000000000c";

std::string rollout_text(const std::string& id) {
  protocol::thread t;
  t.id = id;
  t.created_at = 1762500000;
  t.cwd = "/work";
  protocol::turn u;
  u.id = "turn-1";
  u.status = protocol::turn_status::completed;
  u.items.push_back(protocol::user_message_item{"u", {protocol::user_input::make_text("hi")}, {}});
  t.turns.push_back(u);
  std::string out;
  for (auto& l : encode_thread(t)) out += l + "\n";
  return out;
}

std::string path_of(const std::string& home, const std::string& id) {
  return home + "/sessions/2025/11/07/rollout-2025-11-07T07-20-00-" + id + ".jsonl";
}

std::vector<std::string> lines_of(const store_report& r) {
  std::vector<std::string> out;
  for (auto& f : r.findings) out.push_back(to_string(f));
  return out;
}

TEST(store_check, an_empty_or_sound_home_is_sound) {
  auto home = test::make_temp_dir("store_check_sound");
  EXPECT_TRUE(check_store(home).sound());
  test::write_file(path_of(home, a_id), rollout_text(a_id));
  auto before = check_store(home);
  EXPECT_TRUE(before.sound()) << "no index yet: a start builds it";
  EXPECT_EQ(before.rollouts, 1u);
  ASSERT_TRUE(rebuild_index(home));
  EXPECT_TRUE(check_store(home).sound()) << testing::PrintToString(lines_of(check_store(home)));
}

TEST(store_check, index_entries_that_disagree_with_the_rollouts_are_named) {
  auto home = test::make_temp_dir("store_check_index");
  auto a = path_of(home, a_id), b = path_of(home, b_id), c = path_of(home, c_id);
  test::write_file(a, rollout_text(a_id));
  test::write_file(b, rollout_text(b_id));
  ASSERT_TRUE(rebuild_index(home));
  fs::remove(a);                            // the entry points nowhere
  test::write_file(b, "garbage\n");         // at an unreadable rollout
  test::write_file(c, rollout_text(c_id));  // not indexed
  auto report = check_store(home);
  EXPECT_EQ(lines_of(report),
            (std::vector<std::string>{
                "unreadable " + b + ":1: not JSON (a rollout starts with session metadata)",
                "index " + a_id + ": points to " + a + ", which does not exist",
                "index " + b_id + ": points to " + b + ", which is unreadable",
                "index " + c_id + ": missing; its rollout is " + c}));
  EXPECT_EQ(report.rollouts, 2u);
  EXPECT_EQ(report.unreadable_count, 1u);
  EXPECT_EQ(report.index_findings, 3u);
  EXPECT_EQ(report.damaged, std::vector<std::string>{b});

  auto done = repair_store(home, report, 1763000000);
  ASSERT_EQ(done.rollouts.size(), 1u);
  EXPECT_EQ(done.rollouts[0].error, "");
  EXPECT_EQ(done.rollouts[0].kept, b + ".damaged-1763000000");
  ASSERT_TRUE(done.indexed) << message_of(done.indexed.error());
  EXPECT_EQ(*done.indexed, 1u)
      << "c; b (its metadata rebuilt, no records) has no turn: indexed once it has one";
  EXPECT_TRUE(check_store(home).sound()) << testing::PrintToString(lines_of(check_store(home)));
}

TEST(store_check, an_index_that_is_not_a_database_is_named) {
  auto home = test::make_temp_dir("store_check_bad_index");
  test::write_file(path_of(home, a_id), rollout_text(a_id));
  test::write_file(index_path(home), std::string(8192, 'x'));
  auto report = check_store(home);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(
      to_string(report.findings[0]).rfind("index " + index_path(home) + ": cannot be read: ", 0),
      0u)
      << to_string(report.findings[0]);
  auto done = repair_store(home, report, 1763000000);
  EXPECT_TRUE(done.rollouts.empty());
  ASSERT_TRUE(done.indexed);
  EXPECT_EQ(*done.indexed, 1u);
  EXPECT_TRUE(check_store(home).sound());
}

TEST(store_check, an_archived_entry_under_sessions_is_named) {
  auto home = test::make_temp_dir("store_check_archived");
  auto a = path_of(home, a_id);
  test::write_file(a, rollout_text(a_id));
  {
    thread_index index{index_path(home)};
    auto t = read_rollout(a);
    ASSERT_TRUE(t);
    t->archived = true;
    index.upsert(entry_for(*t, a));
  }
  EXPECT_EQ(lines_of(check_store(home)),
            std::vector<std::string>{"index " + a_id + ": says archived, but " + a + " is not"});
}

}  // namespace store_check_test
}  // namespace parley::store
