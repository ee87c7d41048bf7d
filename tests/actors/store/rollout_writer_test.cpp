// The rollout writer on real files under a layer that fails chosen system
// calls: nothing is acknowledged before it is written (and synced when
// asked), a file never gets a record after one that failed, and what waited
// for the disk is written once, in order, when the disk takes it again.

#include "actors/store/rollout_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "actors/core/errors.hpp"
#include "tests/support/faulty_file_ops.hpp"

namespace parley::store {
namespace rollout_writer_test {  // named: the test executables are unity builds

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream f{path, std::ios::binary};
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// What each append heard: "" not yet, "ok", or the error's message.
struct answers {
  std::map<int, std::string> got;
  append_done for_record(int n) {
    got[n] = "";
    return [this, n](caf::error err) { got[n] = err ? message_of(err) : "ok"; };
  }
  bool ok(int n) const { return got.at(n) == "ok"; }
  bool pending(int n) const { return got.at(n).empty(); }
};

class rollout_writer_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path()
          / ("parley-writer-" + std::to_string(::getpid()) + "-"
             + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    path = (dir / "sessions" / "rollout.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir); }

  static std::vector<std::string> line(int n) { return {R"({"n":)" + std::to_string(n) + "}"}; }
  static std::string text(std::initializer_list<int> ns) {
    std::string s;
    for (int n : ns) s += R"({"n":)" + std::to_string(n) + "}\n";
    return s;
  }

  fs::path dir;
  std::string path;
  std::shared_ptr<test::faulty_file_ops> ops = std::make_shared<test::faulty_file_ops>();
  answers a;
};

TEST_F(rollout_writer_test, a_synced_append_is_answered_only_after_the_flush) {
  rollout_writer w{ops};
  w.append(path, line(1), true, true, a.for_record(1));
  EXPECT_TRUE(a.pending(1));
  EXPECT_TRUE(w.needs_flush());
  w.flush();
  EXPECT_TRUE(a.ok(1));
  w.append(path, line(2), false, false, a.for_record(2));
  EXPECT_TRUE(a.ok(2)) << "an unsynced append is answered once written";
  EXPECT_EQ(slurp(path), text({1, 2}));
}

TEST_F(rollout_writer_test, a_full_disk_holds_records_in_order_until_it_takes_them) {
  rollout_writer w{ops};
  w.append(path, line(1), true, true, a.for_record(1));
  w.flush();
  ops->break_disk(ENOSPC);
  w.append(path, line(2), false, false, a.for_record(2));
  w.append(path, line(3), true, false, a.for_record(3));
  w.flush();
  EXPECT_TRUE(a.pending(2)) << "not written: not answered, not even an unsynced append";
  EXPECT_TRUE(a.pending(3));
  EXPECT_TRUE(w.faulted());
  EXPECT_EQ(w.fault(), "cannot write " + path + ": no space left on device");
  EXPECT_FALSE(w.retry()) << "still full";
  EXPECT_EQ(slurp(path), text({1}));
  ops->heal();
  EXPECT_TRUE(w.retry());
  EXPECT_FALSE(w.faulted());
  EXPECT_TRUE(a.ok(2));
  EXPECT_TRUE(a.ok(3));
  w.append(path, line(4), true, false, a.for_record(4));
  w.flush();
  EXPECT_EQ(slurp(path), text({1, 2, 3, 4})) << "each once, in order";
}

TEST_F(rollout_writer_test, half_a_record_never_stays_in_the_file) {
  rollout_writer w{ops};
  w.append(path, line(1), true, true, a.for_record(1));
  w.flush();
  ops->break_disk(ENOSPC, /*short_first=*/true);
  w.append(path, {std::string(1000, ' ') + R"({"n":2})"}, true, false, a.for_record(2));
  EXPECT_EQ(slurp(path), text({1})) << "the half written was cut off";
  ops->heal();
  EXPECT_TRUE(w.retry());
  EXPECT_TRUE(a.ok(2));
  EXPECT_EQ(slurp(path), text({1}) + std::string(1000, ' ') + R"({"n":2})" + "\n");
}

TEST_F(rollout_writer_test, a_failed_sync_writes_everything_since_the_last_one_again) {
  rollout_writer w{ops};
  w.append(path, line(1), true, true, a.for_record(1));
  w.flush();
  w.append(path, line(2), false, false, a.for_record(2));  // answered, not yet synced
  w.append(path, line(3), true, false, a.for_record(3));
  ops->fail_calls(ops->calls(), 1, EIO);  // the sync
  w.flush();
  EXPECT_TRUE(a.ok(2));
  EXPECT_TRUE(a.pending(3)) << "a sync that failed acknowledges nothing";
  EXPECT_TRUE(w.faulted());
  EXPECT_TRUE(w.retry());
  EXPECT_TRUE(a.ok(3));
  EXPECT_EQ(slurp(path), text({1, 2, 3})) << "cut back to the last sync and written again, once";
}

TEST_F(rollout_writer_test, past_the_cap_a_file_gives_up_until_its_next_turn) {
  rollout_writer::limits lim;
  lim.backlog_bytes = 30;
  rollout_writer w{ops, lim};
  w.append(path, line(1), true, true, a.for_record(1));
  w.flush();
  ops->break_disk(ENOSPC);
  for (int n = 2; n <= 6; ++n) w.append(path, line(n), true, false, a.for_record(n));
  for (int n = 2; n <= 6; ++n) EXPECT_FALSE(a.pending(n)) << n;
  EXPECT_NE(a.got[5].find("bytes already wait for the disk"), std::string::npos) << a.got[5];
  EXPECT_NE(a.got[6].find("was given up"), std::string::npos) << a.got[6];
  EXPECT_NE(a.got[5].find("no space left on device"), std::string::npos) << a.got[5];
  EXPECT_EQ(w.waiting_bytes(), 0u) << "nothing waits: what was capped failed";
  EXPECT_TRUE(w.faulted()) << "but the disk still refuses";
  EXPECT_FALSE(w.retry()) << "the probe is refused too";
  ops->heal();
  EXPECT_TRUE(w.retry()) << "the probe goes through: the disk takes writes again";
  EXPECT_FALSE(w.faulted());
  w.append(path, line(7), true, false, a.for_record(7));
  EXPECT_NE(a.got[7].find("was given up"), std::string::npos)
      << "no record after a hole: " << a.got[7];
  w.append(path, line(8), true, /*opens=*/true, a.for_record(8));
  w.flush();
  EXPECT_TRUE(a.ok(8));
  EXPECT_EQ(slurp(path), text({1, 8}));
}

TEST_F(rollout_writer_test, a_new_file_that_cannot_be_created_waits_like_a_write) {
  rollout_writer w{ops};
  ops->fail_calls(0, 3, EROFS);  // mkdir, and again on the first retry
  w.append(path, line(1), true, true, a.for_record(1));
  EXPECT_TRUE(a.pending(1));
  EXPECT_NE(w.fault().find("read-only file system"), std::string::npos) << w.fault();
  w.retry();
  w.retry();
  EXPECT_TRUE(w.retry());
  EXPECT_TRUE(a.ok(1));
  EXPECT_EQ(slurp(path), text({1}));
}

TEST_F(rollout_writer_test, a_closed_file_refuses_to_move_while_its_records_wait) {
  rollout_writer w{ops};
  w.append(path, line(1), true, true, a.for_record(1));
  w.flush();
  ops->break_disk(ENOSPC);
  w.append(path, line(2), true, false, a.for_record(2));
  EXPECT_TRUE(w.close(path));
  ops->heal();
  EXPECT_TRUE(w.retry());
  EXPECT_FALSE(w.close(path));
}

// Every disk-changing call of a scripted run fails in turn (then the next
// few): whatever was answered ok is in the file exactly once and in order;
// nothing that failed is in it; once the disk heals, everything waiting is
// written. With a small cap some runs give up records: then every synced
// record answered ok is still there, nothing failed is, nothing twice.
TEST_F(rollout_writer_test, every_call_failing_in_turn_loses_and_duplicates_nothing) {
  auto synced = [](int n) { return n % 3 == 0; };
  auto script = [&](rollout_writer& w, answers& got, const std::string& p) {
    for (int n = 1; n <= 12; ++n) {
      bool opens = n == 1 || n == 7;
      w.append(p, line(n), synced(n), opens, got.for_record(n));
      if (n % 4 == 0) w.flush();
    }
    w.flush();
  };
  long total = 0;
  {
    auto clean = std::make_shared<test::faulty_file_ops>();
    rollout_writer w{clean};
    answers got;
    script(w, got, (dir / "clean.jsonl").string());
    total = clean->calls();
  }
  ASSERT_GT(total, 10);
  int runs = 0;
  for (size_t cap : {size_t{1} << 20, size_t{60}}) {
    for (int err : {ENOSPC, EIO, EROFS}) {
      for (long at = 0; at < total; ++at) {
        for (long count : {1L, 3L}) {
          auto p = (dir / ("run-" + std::to_string(cap) + "-" + std::to_string(err) + "-"
                           + std::to_string(at) + "-" + std::to_string(count) + ".jsonl"))
                       .string();
          auto faulty = std::make_shared<test::faulty_file_ops>();
          faulty->fail_calls(at, count, err);
          rollout_writer::limits lim;
          lim.backlog_bytes = cap;
          answers got;
          {
            rollout_writer w{faulty, lim};
            script(w, got, p);
            for (int i = 0; i < 10 && !w.retry(); ++i) {
            }
            EXPECT_FALSE(w.faulted()) << p;
          }
          ++runs;
          std::vector<int> in_file;
          std::istringstream lines{slurp(p)};
          for (std::string l; std::getline(lines, l);) in_file.push_back(std::stoi(l.substr(5)));
          EXPECT_TRUE(std::is_sorted(in_file.begin(), in_file.end())
                      && std::adjacent_find(in_file.begin(), in_file.end()) == in_file.end())
              << p << ": in order, each once";
          auto kept = [&](int n) {
            return std::find(in_file.begin(), in_file.end(), n) != in_file.end();
          };
          for (int n = 1; n <= 12; ++n) {
            EXPECT_FALSE(got.pending(n)) << p << " record " << n << " never answered";
            if (!got.ok(n)) {
              EXPECT_FALSE(kept(n)) << p << " record " << n << " failed but is kept";
            } else if (synced(n) || cap > 1000) {
              EXPECT_TRUE(kept(n)) << p << " record " << n << " was answered ok but is lost";
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 100);
}

}  // namespace rollout_writer_test
}  // namespace parley::store
