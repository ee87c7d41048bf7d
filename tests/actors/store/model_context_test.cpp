// A thread's model context through the rollout: what a turn's model kept
// verbatim, what the items of other turns stand for, and Codex's files.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actors/store/memory_store.hpp"
#include "actors/store/response_items.hpp"
#include "actors/store/rollout_format.hpp"

namespace parley::store {
namespace {

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

json user(const std::string& text) {
  return {{"type", "message"},
          {"role", "user"},
          {"content", json::array({{{"type", "input_text"}, {"text", text}}})}};
}

json exec_call(const std::string& id, const std::string& cmd) {
  return {{"type", "function_call"},
          {"name", "exec_command"},
          {"call_id", id},
          {"arguments", json{{"cmd", cmd}}.dump()}};
}

/// The records a conversation writes for a turn whose model keeps its context.
std::vector<store_record> kept_turn(const std::string& turn, const std::string& text) {
  protocol::user_message_item u{"u-" + turn, {protocol::user_input::make_text(text)}, std::nullopt};
  protocol::command_execution_item c;
  c.id = "call-" + turn;
  c.command = "/bin/sh -c 'echo hi'";
  c.status = protocol::item_status::completed;
  c.exit_code = 0;
  c.aggregated_output = "hi\n";
  protocol::turn done;
  done.id = turn;
  done.status = protocol::turn_status::completed;
  return {
      turn_started_record{turn, 1762500001},
      item_record{turn, u, false},
      context_record{turn, {user(text)}},
      context_record{turn, {exec_call("call-" + turn, "echo hi")}},
      item_record{turn, c, false},
      context_record{
          turn,
          {json{{"type", "function_call_output"}, {"call_id", "call-" + turn}, {"output", "hi"}}}},
      turn_completed_record{done}};
}

/// A scripted turn: its items stand for the context.
std::vector<store_record> derived_turn(const std::string& turn, const std::string& text) {
  protocol::user_message_item u{"u-" + turn, {protocol::user_input::make_text(text)}, std::nullopt};
  protocol::agent_message_item a{"a-" + turn, "answer to " + text, std::string{"final_answer"}};
  protocol::turn done;
  done.id = turn;
  done.status = protocol::turn_status::completed;
  return {turn_started_record{turn, 1762500001}, item_record{turn, u, true},
          item_record{turn, a, true}, turn_completed_record{done}};
}

std::vector<std::string> encode(const std::vector<store_record>& records) {
  std::vector<std::string> lines{encode_session_meta(meta())};
  for (auto& r : records)
    for (auto& l : encode_record(meta(), r)) lines.push_back(l);
  return lines;
}

std::vector<store_record> both_turns() {
  auto records = derived_turn("t1", "first");
  for (auto& r : kept_turn("t2", "second")) records.push_back(r);
  return records;
}

TEST(model_context, kept_context_is_written_once_verbatim_and_read_back_per_turn) {
  auto lines = encode(kept_turn("t1", "hello"));
  int response_items = 0;
  for (auto& l : lines) response_items += json::parse(l)["type"] == "response_item";
  EXPECT_EQ(response_items, 3);  // the message, the call, its output: nothing derived twice
  auto back = decode_rollout(lines, "/x.jsonl");
  ASSERT_TRUE(back) << to_string(back.error());
  ASSERT_EQ(back->context.size(), 3u);
  for (auto& c : back->context) EXPECT_EQ(c.turn_id, "t1");
  EXPECT_EQ(back->context[1].item, exec_call("call-t1", "echo hi"));
  ASSERT_EQ(back->meta.turns.size(), 1u);
  EXPECT_EQ(back->meta.turns[0].items.size(), 2u);  // the thread's items are unchanged
}

TEST(model_context, history_is_the_same_from_memory_and_from_the_rollout) {
  stored_thread in_memory;
  apply_record(in_memory, thread_created_record{meta(), {}});
  for (auto& r : both_turns()) apply_record(in_memory, r);
  auto from_disk = decode_rollout(encode(both_turns()), "/x.jsonl");
  ASSERT_TRUE(from_disk);
  auto a = model_history(in_memory, "next");
  auto b = model_history(*from_disk, "next");
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0], user("first"));  // the scripted turn, derived
  EXPECT_EQ(a[1]["role"], "assistant");
  EXPECT_EQ(a[2], user("second"));  // the kept turn, verbatim
  EXPECT_EQ(a[3], exec_call("call-t2", "echo hi"));
  EXPECT_EQ(a[4]["type"], "function_call_output");
}

TEST(model_context, the_asking_turn_and_turns_the_thread_no_longer_has_are_left_out) {
  stored_thread t;
  apply_record(t, thread_created_record{meta(),
                                        {context_item{"", user("preamble")},
                                         context_item{"gone", user("rolled back")}}});
  for (auto& r : both_turns()) apply_record(t, r);
  auto h = model_history(t, "t2");
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0], user("preamble"));
  EXPECT_EQ(h[1], user("first"));
}

TEST(model_context, a_fork_writes_its_copied_context_verbatim) {
  stored_thread source;
  apply_record(source, thread_created_record{meta(), {}});
  for (auto& r : both_turns()) apply_record(source, r);
  auto fork = meta();
  fork.turns = source.meta.turns;
  auto back = decode_rollout(encode_thread(fork, source.context), "/fork.jsonl");
  ASSERT_TRUE(back);
  EXPECT_EQ(model_history(*back, ""), model_history(source, ""));
}

TEST(model_context, codexs_context_before_its_first_event_belongs_to_that_turn) {
  // Codex's legacy files: response items first, then the events of one
  // implicit turn; no task_started.
  std::vector<std::string> lines{encode_session_meta(meta())};
  auto line = [](const char* type, json payload) {
    return json{{"timestamp", "2025-11-07T07:20:00.000Z"}, {"type", type}, {"payload", payload}}
        .dump();
  };
  lines.push_back(line("response_item", user("legacy question")));
  lines.push_back(line("event_msg", {{"type", "user_message"}, {"message", "legacy question"}}));
  lines.push_back(line("response_item", exec_call("c9", "ls")));
  lines.push_back(line("event_msg", {{"type", "agent_message"}, {"message", "listed"}}));
  auto back = decode_rollout(lines, "/legacy.jsonl");
  ASSERT_TRUE(back);
  ASSERT_EQ(back->meta.turns.size(), 1u);
  ASSERT_EQ(back->context.size(), 2u);
  EXPECT_EQ(back->context[0].turn_id, back->meta.turns[0].id);
  auto h = model_history(*back, "");
  ASSERT_EQ(h.size(), 2u);  // verbatim, not also derived from the events
  EXPECT_EQ(h[1], exec_call("c9", "ls"));
}

TEST(model_context, injected_items_keep_their_place_from_memory_and_from_the_rollout) {
  // Before any turn, after a scripted turn (its items stand for it), and
  // after a turn that kept its own context.
  std::vector<store_record> records{injected_record{{user("early")}}};
  for (auto& r : derived_turn("t1", "first")) records.push_back(r);
  records.push_back(injected_record{{user("between"), user("and more")}});
  for (auto& r : kept_turn("t2", "second")) records.push_back(r);
  records.push_back(injected_record{{user("last")}});
  stored_thread in_memory;
  apply_record(in_memory, thread_created_record{meta(), {}});
  for (auto& r : records) apply_record(in_memory, r);
  auto from_disk = decode_rollout(encode(records), "/x.jsonl");
  ASSERT_TRUE(from_disk) << to_string(from_disk.error());
  auto a = model_history(in_memory, "next");
  EXPECT_EQ(a, model_history(*from_disk, "next"));
  ASSERT_EQ(a.size(), 9u);
  EXPECT_EQ(a[0], user("early"));
  EXPECT_EQ(a[1], user("first"));  // t1's items still stand for it
  EXPECT_EQ(a[2]["role"], "assistant");
  EXPECT_EQ(a[3], user("between"));
  EXPECT_EQ(a[4], user("and more"));
  EXPECT_EQ(a[5], user("second"));
  EXPECT_EQ(a[8], user("last"));
  // They are no turn items.
  EXPECT_EQ(from_disk->meta.turns[0].items.size(), 2u);
  // A fork writes them back in place.
  auto fork = meta();
  fork.turns = in_memory.meta.turns;
  auto forked = decode_rollout(encode_thread(fork, in_memory.context), "/fork.jsonl");
  ASSERT_TRUE(forked);
  EXPECT_EQ(model_history(*forked, ""), model_history(in_memory, ""));
}

TEST(model_context, git_info_is_read_back_last_one_standing) {
  protocol::git_info g;
  g.branch = "main";
  std::vector<store_record> records{git_info_record{g}};
  for (auto& r : derived_turn("t1", "first")) records.push_back(r);
  auto back = decode_rollout(encode(records), "/x.jsonl");
  ASSERT_TRUE(back);
  ASSERT_TRUE(back->meta.git);
  EXPECT_EQ(*back->meta.git, g);
  records.push_back(git_info_record{std::nullopt});
  back = decode_rollout(encode(records), "/x.jsonl");
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->meta.git);
}

}  // namespace
}  // namespace parley::store
