// thread/delete's disk step and why its order is safe: the rollout is
// unlinked first, and a start after a crash drops an index entry whose
// rollout is gone (so the thread never comes back half there).

#include "actors/store/rollout_delete.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "actors/store/local_store.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/thread_index.hpp"

namespace parley::store {
namespace {

namespace fs = std::filesystem;

struct rollout_delete_fixture : ::testing::Test {
  void SetUp() override {
    home = fs::temp_directory_path() / ("parley-delete-" + std::to_string(::getpid()) + "-"
                                        + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(home);
    fs::create_directories(home);
  }
  void TearDown() override { fs::remove_all(home); }

  /// A rollout with one completed turn under the home; its path.
  std::string write_thread(const std::string& id) {
    protocol::thread t;
    t.id = id;
    t.created_at = 1762500000;
    t.cwd = "/work";
    t.cli_version = "0.1.0";
    t.model_provider = "parley";
    protocol::turn u;
    u.id = "019a5c3e-7b44-7d02-8e11-90ab12cd34ef";
    u.started_at = 1762500001;
    u.status = protocol::turn_status::completed;
    u.items.push_back(
        protocol::user_message_item{"u", {protocol::user_input::make_text("hi")}, std::nullopt});
    t.turns.push_back(u);
    auto path = (home / rollout_relative_path(t.created_at, id)).string();
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out{path};
    for (auto& line : encode_thread(t)) out << line << "\n";
    return path;
  }

  fs::path home;
};

TEST_F(rollout_delete_fixture, unlinks_the_rollout) {
  auto path = write_thread("019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80");
  ASSERT_TRUE(fs::exists(path));
  EXPECT_FALSE(delete_rollout(path));
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(rollout_delete_fixture, a_file_already_gone_is_no_error) {
  // A delete retried after a crash that came after the unlink.
  EXPECT_FALSE(delete_rollout((home / "sessions/2026/01/01/rollout-x.jsonl").string()));
  EXPECT_FALSE(delete_rollout((home / "no-such-folder/rollout-x.jsonl").string()));
}

TEST_F(rollout_delete_fixture, what_cannot_be_unlinked_is_an_error) {
  auto dir = home / "sessions" / "a-folder.jsonl";
  fs::create_directories(dir / "inside");  // unlink(2) refuses a folder
  auto err = delete_rollout(dir.string());
  EXPECT_TRUE(err);
  EXPECT_TRUE(fs::exists(dir));
}

TEST_F(rollout_delete_fixture, a_crash_between_unlink_and_index_leaves_nothing_after_a_start) {
  auto kept = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c81";
  auto gone = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c82";
  write_thread(kept);
  auto path = write_thread(gone);
  {
    thread_index index{index_path(home.string())};
    sync_index(index, home.string());
    ASSERT_TRUE(index.find(gone));
  }
  // The crash: the rollout is unlinked, the index entry was not dropped.
  ASSERT_FALSE(delete_rollout(path));
  thread_index index{index_path(home.string())};
  ASSERT_TRUE(index.find(gone)) << "the stale entry is there before the start";
  sync_index(index, home.string());  // what every start does
  EXPECT_FALSE(index.find(gone));
  EXPECT_TRUE(index.find(kept));
}

}  // namespace
}  // namespace parley::store
