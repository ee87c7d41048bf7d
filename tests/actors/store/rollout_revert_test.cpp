// thread/revert in a rollout: which lines a thread keeps, and replacing the
// file so that the old one stands until the new one is whole.

#include "actors/store/rollout_revert.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actors/core/errors.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"

namespace parley::store {
namespace rollout_revert_test {  // named: the unity build joins test files

using nlohmann::json;

const char* kThread = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80";

protocol::thread meta() {
  protocol::thread t;
  t.id = kThread;
  t.created_at = 1762500000;
  t.cwd = "/w";
  t.model_provider = "mock";
  return t;
}

std::vector<store_record> turn(const std::string& id, const std::string& text) {
  protocol::user_message_item u{"u-" + id, {protocol::user_input::make_text(text)}, std::nullopt};
  protocol::turn done;
  done.id = id;
  done.status = protocol::turn_status::completed;
  return {turn_started_record{id, 1762500001}, item_record{id, u, true},
          turn_completed_record{done}};
}

std::vector<std::string> lines_of(const std::vector<store_record>& records) {
  std::vector<std::string> out{encode_session_meta(meta())};
  for (auto& r : records)
    for (auto& l : encode_record(meta(), r)) out.push_back(l);
  return out;
}

std::vector<store_record> three_turns() {
  std::vector<store_record> records;
  for (auto& r : turn("t1", "one")) records.push_back(r);
  records.push_back(injected_record{{json{{"type", "message"}, {"role", "user"},
                                          {"content", json::array()}}}});
  for (auto& r : turn("t2", "two")) records.push_back(r);
  records.push_back(thread_renamed_record{std::string{"named later"}});
  protocol::git_info g;
  g.sha = "abc";
  records.push_back(git_info_record{g});
  for (auto& r : turn("t3", "three")) records.push_back(r);
  return records;
}

TEST(rollout_revert, keeps_the_turns_before_and_the_threads_own_records) {
  auto kept = reverted_lines(lines_of(three_turns()), "t2");
  ASSERT_TRUE(kept) << to_string(kept.error());
  auto t = decode_rollout(*kept, "/x.jsonl");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->meta.turns.size(), 1u);
  EXPECT_EQ(t->meta.turns[0].id, "t1");
  EXPECT_EQ(t->meta.name, std::optional<std::string>{"named later"});
  ASSERT_TRUE(t->meta.git);
  EXPECT_EQ(t->meta.git->sha, std::optional<std::string>{"abc"});
  // t1's own (its user message) and what was injected after it, before the cut.
  ASSERT_EQ(t->context.size(), 2u);
  EXPECT_FALSE(t->context[0].injected);
  EXPECT_TRUE(t->context[1].injected);
  auto last = json::parse(kept->back());
  EXPECT_EQ(last["type"], reverted_line_type);
  EXPECT_EQ(last["payload"]["dropped_turns"], 2);
}

TEST(rollout_revert, before_the_first_turn_keeps_no_turn) {
  auto kept = reverted_lines(lines_of(three_turns()), "t1");
  ASSERT_TRUE(kept);
  auto t = decode_rollout(*kept, "/x.jsonl");
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->meta.turns.empty());
  EXPECT_TRUE(t->context.empty());
}

TEST(rollout_revert, an_unknown_turn_is_not_found) {
  auto kept = reverted_lines(lines_of(three_turns()), "t9");
  ASSERT_FALSE(kept);
  EXPECT_EQ(message_of(kept.error()), "turn not found: t9");
}

TEST(rollout_revert, replaces_the_file_whole_and_leaves_no_temporary) {
  auto dir = std::filesystem::temp_directory_path()
             / ("parley-revert-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / (std::string{"rollout-2025-11-07T07-20-00-"} + kThread + ".jsonl")).string();
  {
    std::ofstream f(path);
    for (auto& l : lines_of(three_turns())) f << l << "\n";
  }
  auto kept = reverted_lines(*read_rollout_lines(path), "t3");
  ASSERT_TRUE(kept);
  ASSERT_FALSE(replace_rollout(path, *kept));
  auto back = read_rollout(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->meta.turns.size(), 2u);
  EXPECT_EQ(list_rollouts(dir.string()), std::vector<std::string>{path});
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace rollout_revert_test
}  // namespace parley::store
