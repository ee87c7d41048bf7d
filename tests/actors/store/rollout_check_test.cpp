// Checking and repairing one rollout on real files: a missing first line, a
// hole of garbage in the middle, a torn last line, NUL bytes and invalid
// UTF-8, zstd that breaks off; each named with its line, and after the
// repair read back with every good record, the original kept beside it. A
// sound rollout is left alone.

#include "actors/store/rollout_check.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "actors/core/errors.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"
#include "tests/support/app_server_client.hpp"

namespace parley::store {
namespace rollout_check_test {  // named: the test executables are unity builds

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::string_literals;

const std::string id = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80";
constexpr int64_t now = 1763000000;

/// Three completed turns of a user message and an answer each.
protocol::thread sample() {
  protocol::thread t;
  t.id = id;
  t.created_at = 1762500000;
  t.cwd = "/work/project";
  t.model_provider = "parley";
  for (int i = 0; i < 3; ++i) {
    protocol::turn u;
    u.id = "turn-" + std::to_string(i);
    u.started_at = 1762500001 + i;
    u.completed_at = 1762500002 + i;
    u.status = protocol::turn_status::completed;
    auto n = std::to_string(i);
    u.items.push_back(
        protocol::user_message_item{"u" + n, {protocol::user_input::make_text("ask " + n)}, {}});
    u.items.push_back(protocol::agent_message_item{"a" + n, "answer " + n, std::nullopt});
    t.turns.push_back(u);
  }
  return t;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (auto& l : lines) out += l + "\n";
  return out;
}

/// Where the rollout of `id` lives under `home` (plain or archived).
std::string rollout_at(const std::string& home, bool archived = false) {
  return archived ? home + "/archived_sessions/rollout-2025-11-07T07-20-00-" + id + ".jsonl.zst"
                  : home + "/sessions/2025/11/07/rollout-2025-11-07T07-20-00-" + id + ".jsonl";
}

/// The lines of a rollout's text, for comparing thread by thread.
json turns_of(const std::vector<std::string>& lines) {
  auto t = decode_rollout(lines, "x");
  EXPECT_TRUE(t) << message_of(t.error());
  return t ? json(t->meta.turns) : json();
}

std::vector<std::string> findings_of(const rollout_scan& scan) {
  std::vector<std::string> out;
  for (auto& f : scan.findings) out.push_back(to_string(f));
  return out;
}

/// Repairs `path`: the damaged bytes are kept beside it, not as a rollout.
void repair(const std::string& path, const std::string& damaged_bytes) {
  auto scan = scan_rollout(path);
  auto kept = repair_rollout(path, scan, now);
  ASSERT_TRUE(kept) << message_of(kept.error());
  EXPECT_EQ(*kept, path + ".damaged-" + std::to_string(now));
  EXPECT_EQ(test::read_file(*kept), damaged_bytes);
  auto dir = fs::path(path).parent_path().string();
  EXPECT_EQ(list_rollouts(dir), std::vector<std::string>{path})
      << "the kept original is no rollout";
  EXPECT_FALSE(fs::exists(path + ".repair-tmp"));
  EXPECT_TRUE(scan_rollout(path).sound())
      << testing::PrintToString(findings_of(scan_rollout(path)));
}

TEST(rollout_check, a_sound_rollout_has_no_findings_and_is_not_rewritten) {
  auto home = test::make_temp_dir("check_sound");
  auto path = rollout_at(home);
  auto lines = encode_thread(sample());
  test::write_file(path, joined(lines));
  auto scan = scan_rollout(path);
  EXPECT_TRUE(scan.sound()) << testing::PrintToString(findings_of(scan));
  EXPECT_EQ(scan.thread_id, id);
  EXPECT_EQ(scan.salvaged, lines);
  EXPECT_FALSE(scan.meta_rebuilt);
  // A last line without its newline is whole to the reader: sound too.
  auto unended = joined(lines);
  unended.pop_back();
  EXPECT_TRUE(scan_rollout_text(unended, path).sound());
  // Empty lines are skipped by every reader: not damage.
  EXPECT_TRUE(scan_rollout_text("\n" + joined(lines) + "\n\n", path).sound());
}

TEST(rollout_check, a_missing_first_line_is_rebuilt_from_the_rest) {
  auto home = test::make_temp_dir("check_no_meta");
  auto path = rollout_at(home);
  auto lines = encode_thread(sample());
  // A Codex turn_context line tells the thread's cwd.
  lines.insert(
      lines.begin() + 1,
      R"({"timestamp":"2025-11-07T07:20:01.000Z","type":"turn_context","payload":{"cwd":"/from/context"}})");
  std::vector<std::string> rest(lines.begin() + 1, lines.end());
  auto damaged = joined(rest);
  test::write_file(path, damaged);

  auto before = read_rollout(path);
  ASSERT_FALSE(before);
  EXPECT_EQ(message_of(before.error()), "failed to read rollout `" + path
                                            + "`: line 1: it does not start with session metadata");
  auto scan = scan_rollout(path);
  EXPECT_EQ(findings_of(scan),
            std::vector<std::string>{"unreadable " + path
                                     + ":1: it does not start with session metadata"});
  EXPECT_TRUE(scan.unreadable());
  EXPECT_TRUE(scan.meta_rebuilt);
  EXPECT_EQ(scan.dropped, 0u);

  repair(path, damaged);
  auto back = read_rollout(path);
  ASSERT_TRUE(back) << message_of(back.error());
  EXPECT_EQ(back->meta.id, id);
  EXPECT_EQ(back->meta.cwd, "/from/context");
  EXPECT_EQ(back->meta.created_at, 1762500001) << "the first record's time";
  EXPECT_EQ(json(back->meta.turns), turns_of(lines)) << "every record kept";
  // Every line that was there is there, in order, behind the new first line.
  auto repaired = split_rollout_lines(test::read_file(path));
  EXPECT_EQ(std::vector<std::string>(repaired.begin() + 1, repaired.end()), rest);
}

TEST(rollout_check, session_metadata_that_is_not_first_moves_to_the_front) {
  auto home = test::make_temp_dir("check_meta_later");
  auto path = rollout_at(home);
  auto lines = encode_thread(sample());
  auto damaged = "\x01\x02 not json\n" + joined(lines);
  test::write_file(path, damaged);
  auto scan = scan_rollout(path);
  EXPECT_EQ(findings_of(scan),
            std::vector<std::string>{"unreadable " + path
                                     + ":1: not JSON (a rollout starts with session metadata) (it "
                                       "is on line 2)"});
  EXPECT_FALSE(scan.meta_rebuilt);
  EXPECT_EQ(scan.dropped, 1u);
  repair(path, damaged);
  EXPECT_EQ(test::read_file(path), joined(lines)) << "the original session metadata, unchanged";
}

TEST(rollout_check, a_hole_costs_only_the_records_in_it) {
  auto home = test::make_temp_dir("check_hole");
  auto path = rollout_at(home);
  auto lines = encode_thread(sample());
  // Line 5 (the first turn's answer) and line 6 are overwritten by garbage.
  auto damaged_lines = lines;
  damaged_lines[4] = "{\"timestamp\":\"2025-11-07T07:2\0\0garbage"s;
  damaged_lines[5] = "]]]";
  auto damaged = joined(damaged_lines);
  test::write_file(path, damaged);

  auto scan = scan_rollout(path);
  EXPECT_EQ(findings_of(scan),
            std::vector<std::string>{"damaged " + path + ":5-6: not JSON (2 lines)"});
  EXPECT_FALSE(scan.unreadable());
  EXPECT_EQ(scan.thread_id, id);
  EXPECT_EQ(scan.dropped, 2u);
  ASSERT_TRUE(read_rollout(path)) << "the reader reads around it, silently";

  repair(path, damaged);
  auto good = lines;
  good.erase(good.begin() + 4, good.begin() + 6);
  EXPECT_EQ(test::read_file(path), joined(good));
  auto back = read_rollout(path);
  ASSERT_TRUE(back) << message_of(back.error());
  EXPECT_EQ(back->meta.turns.size(), 3u) << "no turn lost";
  EXPECT_EQ(json(back->meta.turns), turns_of(good));
}

TEST(rollout_check, a_torn_last_line_is_dropped) {
  auto home = test::make_temp_dir("check_torn");
  auto path = rollout_at(home);
  auto lines = encode_thread(sample());
  auto damaged = joined(lines) + R"({"timestamp":"2025-11-07T07:20:09.000Z","type":"event_m)";
  test::write_file(path, damaged);
  auto scan = scan_rollout(path);
  EXPECT_EQ(findings_of(scan),
            std::vector<std::string>{"damaged " + path + ":" + std::to_string(lines.size() + 1)
                                     + ": torn last line (no newline, not JSON)"});
  repair(path, damaged);
  EXPECT_EQ(test::read_file(path), joined(lines));
}

TEST(rollout_check, nul_bytes_and_invalid_utf8_are_not_records) {
  auto home = test::make_temp_dir("check_garbage");
  auto path = rollout_at(home);
  auto lines = encode_thread(sample());
  auto damaged_lines = lines;
  damaged_lines.insert(damaged_lines.begin() + 2,
                       {std::string(8, '\0'), "\xff\xfe\xfd",
                        // JSON in shape, but its string is not UTF-8.
                        R"({"type":"event_msg","payload":{"type":"agent_message","message":")"
                        "\xc3\x28"
                        R"("}})",
                        "7"});
  // A crash can leave a block of NULs at the end.
  auto damaged = joined(damaged_lines) + std::string(4096, '\0');
  test::write_file(path, damaged);
  auto scan = scan_rollout(path);
  auto n = std::to_string(damaged_lines.size() + 1);
  EXPECT_EQ(findings_of(scan),
            (std::vector<std::string>{
                "damaged " + path + ":3-5: not JSON (3 lines)",
                "damaged " + path + ":6: not a JSON object",
                "damaged " + path + ":" + n + ": torn last line (no newline, not JSON)"}));
  EXPECT_EQ(scan.dropped, 5u);
  repair(path, damaged);
  EXPECT_EQ(test::read_file(path), joined(lines));
  auto back = read_rollout(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(json(back->meta.turns), turns_of(lines));
}

TEST(rollout_check, an_empty_rollout_becomes_a_thread_without_turns) {
  auto home = test::make_temp_dir("check_empty");
  auto path = rollout_at(home);
  test::write_file(path, "");
  EXPECT_EQ(findings_of(scan_rollout(path)),
            std::vector<std::string>{"unreadable " + path + ": the file is empty"});
  repair(path, "");
  auto back = read_rollout(path);
  ASSERT_TRUE(back) << message_of(back.error());
  EXPECT_EQ(back->meta.id, id);
  EXPECT_EQ(back->meta.created_at, 1762500000) << "the file name's time";
  EXPECT_TRUE(back->meta.turns.empty());
}

TEST(rollout_check, session_metadata_without_a_valid_id_takes_the_file_names) {
  auto home = test::make_temp_dir("check_bad_id");
  auto path = rollout_at(home);
  auto lines = encode_thread(sample());
  auto meta = json::parse(lines[0]);
  meta["payload"]["id"] = "not-a-uuid";
  auto damaged_lines = lines;
  damaged_lines[0] = meta.dump();
  test::write_file(path, joined(damaged_lines));
  EXPECT_EQ(
      findings_of(scan_rollout(path)),
      std::vector<std::string>{"unreadable " + path + ":1: session metadata has no valid id"});
  repair(path, joined(damaged_lines));
  auto back = read_rollout(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->meta.id, id);
  EXPECT_EQ(back->meta.cwd, "/work/project") << "the rest of the metadata is kept";
  EXPECT_EQ(json(back->meta.turns), turns_of(lines));
}

TEST(rollout_check, an_archived_rollout_is_repaired_into_valid_zstd) {
  auto home = test::make_temp_dir("check_zstd");
  auto path = rollout_at(home, true);
  auto lines = encode_thread(sample());
  // Two frames: the first holds the session metadata and the first turn,
  // the second is broken.
  std::vector<std::string> first(lines.begin(), lines.begin() + 7),
      second(lines.begin() + 7, lines.end());
  auto frame1 = compress_zstd(joined(first));
  auto frame2 = compress_zstd(joined(second));
  ASSERT_TRUE(frame1 && frame2);
  auto broken = *frame2;
  broken[0] = '\x00';  // its magic number
  auto damaged = *frame1 + broken;
  test::write_file(path, damaged);
  ASSERT_FALSE(read_rollout(path));
  auto scan = scan_rollout(path);
  ASSERT_EQ(scan.findings.size(), 1u) << testing::PrintToString(findings_of(scan));
  EXPECT_EQ(to_string(scan.findings[0]).rfind("unreadable " + path + ": corrupt zstd data: ", 0),
            0u)
      << to_string(scan.findings[0]);
  repair(path, damaged);
  auto back = read_rollout(path);
  ASSERT_TRUE(back) << message_of(back.error());
  EXPECT_EQ(json(back->meta.turns), turns_of(first)) << "what decompressed is kept";

  // Cut short inside a frame: the reader takes what there is, silently.
  auto cut = *frame1 + frame2->substr(0, frame2->size() - 3);
  test::write_file(path, cut);
  scan = scan_rollout(path);
  ASSERT_FALSE(scan.findings.empty());
  EXPECT_EQ(to_string(scan.findings[0]),
            "damaged " + path + ": zstd data cut short inside a frame");
  auto kept = repair_rollout(path, scan, now + 1);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(scan_rollout(path).sound());
  EXPECT_EQ(json(read_rollout(path)->meta.turns), turns_of(first));
}

TEST(rollout_check, a_second_repair_in_the_same_second_keeps_both_originals) {
  auto home = test::make_temp_dir("check_twice");
  auto path = rollout_at(home);
  test::write_file(path, "x\n");
  ASSERT_TRUE(repair_rollout(path, scan_rollout(path), now));
  test::write_file(path, "y\n");
  auto kept = repair_rollout(path, scan_rollout(path), now);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, path + ".damaged-" + std::to_string(now) + "-2");
  EXPECT_EQ(test::read_file(path + ".damaged-" + std::to_string(now)), "x\n");
  EXPECT_EQ(test::read_file(*kept), "y\n");
}

}  // namespace rollout_check_test
}  // namespace parley::store
