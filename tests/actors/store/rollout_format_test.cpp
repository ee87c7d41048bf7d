#include "actors/store/rollout_format.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "actors/core/errors.hpp"
#include "tests/support/app_server_client.hpp"

namespace parley::store {
namespace {

using nlohmann::json;

protocol::thread sample() {
  protocol::thread t;
  t.id = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80";
  t.created_at = 1762500000;
  t.cwd = "/work/my project";
  t.cli_version = "0.1.0";
  t.model_provider = "parley";
  t.name = "demo";
  protocol::turn u;
  u.id = "019a5c3e-7b44-7d02-8e11-90ab12cd34ef";
  u.started_at = 1762500001;
  u.completed_at = 1762500002;
  u.duration_ms = 900;
  u.status = protocol::turn_status::failed;
  u.error = protocol::turn_error{"model failed: boom", std::string{"other"}, std::nullopt};
  u.items.push_back(protocol::user_message_item{"u", {protocol::user_input::make_text("run: ls")}, std::nullopt});
  protocol::command_execution_item c;
  c.id = "call_1";
  c.command = "/bin/sh -c 'ls -l'";
  c.cwd = "/work/my project";
  c.status = protocol::item_status::completed;
  c.command_actions = {protocol::command_action{protocol::command_action::kind::list_files, "ls -l", {}, {}, {}}};
  c.aggregated_output = "total 0\n";
  c.exit_code = 0;
  c.duration_ms = 1234;
  c.process_id = "42";
  u.items.push_back(c);
  u.items.push_back(protocol::agent_message_item{"m", "done", std::string{"final_answer"}});
  t.turns.push_back(u);
  protocol::turn v;
  v.id = "019a5c3e-7b44-7d02-8e11-90ab12cd34f0";
  v.status = protocol::turn_status::interrupted;
  v.started_at = 1762500003;
  v.items.push_back(protocol::user_message_item{"u2", {protocol::user_input::make_text("again")}, std::nullopt});
  t.turns.push_back(v);
  return t;
}

TEST(rollout_format, a_thread_round_trips) {
  auto t = sample();
  auto lines = encode_thread(t);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(json::parse(lines[0])["type"], "session_meta");
  auto back = decode_rollout(lines, "/x.jsonl");
  ASSERT_TRUE(back) << to_string(back.error());
  auto& b = back->meta;
  EXPECT_EQ(b.id, t.id);
  EXPECT_EQ(b.created_at, t.created_at);
  EXPECT_EQ(b.cwd, t.cwd);
  EXPECT_EQ(b.name, "demo");
  EXPECT_EQ(b.preview, "run: ls");
  ASSERT_EQ(b.turns.size(), 2u);
  auto& u = b.turns[0];
  EXPECT_EQ(u.id, t.turns[0].id);
  EXPECT_EQ(u.status, protocol::turn_status::failed);
  ASSERT_TRUE(u.error);
  EXPECT_EQ(u.error->message, "model failed: boom");
  EXPECT_EQ(u.duration_ms, 900);
  ASSERT_EQ(u.items.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<protocol::user_message_item>(u.items[0]));
  auto& c = std::get<protocol::command_execution_item>(u.items[1]);
  EXPECT_EQ(json(c), json(t.turns[0].items[1])) << "a command item survives exactly";
  EXPECT_EQ(std::get<protocol::agent_message_item>(u.items[2]).text, "done");
  EXPECT_EQ(b.turns[1].status, protocol::turn_status::interrupted);
}

TEST(rollout_format, messages_and_commands_keep_their_order) {
  // A model says something, runs a command, then says more: reading the
  // rollout back must not move the messages after the command (a resumed
  // thread sends this order to the model).
  auto t = sample();
  auto& items = t.turns[0].items;
  items.insert(items.begin() + 1, protocol::agent_message_item{"m0", "first", std::nullopt});
  auto back = decode_rollout(encode_thread(t), "/x.jsonl");
  ASSERT_TRUE(back) << to_string(back.error());
  auto& got = back->meta.turns[0].items;
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<protocol::user_message_item>(got[0]));
  ASSERT_TRUE(std::holds_alternative<protocol::agent_message_item>(got[1]));
  EXPECT_EQ(std::get<protocol::agent_message_item>(got[1]).text, "first");
  EXPECT_TRUE(std::holds_alternative<protocol::command_execution_item>(got[2]));
  ASSERT_TRUE(std::holds_alternative<protocol::agent_message_item>(got[3]));
  EXPECT_EQ(std::get<protocol::agent_message_item>(got[3]).text, "done");
}

TEST(rollout_format, commands_use_codex_turn_item_shapes) {
  auto lines = encode_thread(sample());
  bool found = false;
  for (auto& l : lines) {
    auto j = json::parse(l);
    if (j["payload"].value("type", "") != "item_completed") continue;
    auto& item = j["payload"]["item"];
    EXPECT_EQ(item["type"], "CommandExecution");
    EXPECT_EQ(item["command"], json::array({"/bin/sh", "-c", "ls -l"}));
    EXPECT_EQ(item["cwd"], "file:///work/my%20project");
    EXPECT_EQ(item["duration"], (json{{"secs", 1}, {"nanos", 234000000}}));
    EXPECT_EQ(item["parsed_cmd"][0]["type"], "list_files");
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(rollout_format, not_a_rollout) {
  EXPECT_FALSE(decode_rollout({}, "p"));
  EXPECT_FALSE(decode_rollout({"nope"}, "p"));
  EXPECT_FALSE(decode_rollout({R"({"type":"event_msg","payload":{}})"}, "p"));
  EXPECT_FALSE(decode_rollout({R"({"type":"session_meta","payload":{"id":"x"}})"}, "p"));
}

// thread/read of an unreadable thread answers with this: it names the file
// and the line, counting the empty lines the reader skips.
TEST(rollout_format, an_unreadable_rollout_is_named_with_its_line) {
  auto dir = test::make_temp_dir("rollout_unreadable");
  auto expect = [&](const std::string& name, const std::string& data, const std::string& why) {
    test::write_file(dir + "/" + name, data);
    auto t = read_rollout(dir + "/" + name);
    ASSERT_FALSE(t) << name;
    EXPECT_EQ(message_of(t.error()), "failed to read rollout `" + dir + "/" + name + "`: " + why);
  };
  expect("garbage.jsonl", "\n\n\x01\xff garbage\n",
         "line 3: not JSON (a rollout starts with session metadata)");
  expect("event.jsonl", "{\"type\":\"event_msg\",\"payload\":{}}\n",
         "line 1: it does not start with session metadata");
  expect("bad_id.jsonl", "{\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n",
         "line 1: session metadata has no valid id");
  expect("empty.jsonl", "", "the file is empty");
}

TEST(rollout_format, unknown_lines_and_a_second_session_meta_are_ignored) {
  auto lines = encode_thread(sample());
  lines.insert(lines.begin() + 1, R"({"timestamp":"2025-11-07T07:20:00.000Z","type":"session_meta","payload":{"id":"019a5c3e-7b10-7c21-9a3d-000000000000"}})");
  lines.insert(lines.begin() + 2, R"({"timestamp":"2025-11-07T07:20:00.000Z","type":"world_state","payload":{"x":1}})");
  lines.push_back(R"({"timestamp":"2025-11-07T07:20:00.000Z","type":"event_msg","payload":{"type":"thread_settings_applied"}})");
  auto back = decode_rollout(lines, "p");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->meta.id, "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80");
  EXPECT_EQ(back->meta.turns.size(), 2u);
}

TEST(rollout_format, a_goal_is_written_as_codex_writes_it_and_read_back) {
  auto t = sample();
  auto lines = encode_thread(t);
  protocol::thread_goal g;
  g.thread_id = t.id;
  g.objective = "ship it";
  g.status = "paused";
  g.created_at = 1762500010;
  g.updated_at = 1762500011;
  auto set = encode_record(t, goal_record{g});
  ASSERT_EQ(set.size(), 1u);
  auto rec = json::parse(set[0]);
  EXPECT_EQ(rec["type"], "event_msg");
  EXPECT_EQ(rec["payload"]["type"], "thread_goal_updated");
  EXPECT_EQ(rec["payload"]["threadId"], t.id);
  EXPECT_EQ(rec["payload"]["goal"]["objective"], "ship it");
  EXPECT_FALSE(rec["payload"]["goal"].contains("tokenBudget")) << "left out when none, as Codex";
  lines.insert(lines.end(), set.begin(), set.end());
  auto back = decode_rollout(lines, "/x.jsonl");
  ASSERT_TRUE(back) << to_string(back.error());
  ASSERT_TRUE(back->goal);
  EXPECT_EQ(json(*back->goal), json(g));
  EXPECT_EQ(back->meta.turns.size(), 2u) << "goal records are no part of a turn";
  auto cleared = encode_record(t, goal_record{std::nullopt});
  lines.insert(lines.end(), cleared.begin(), cleared.end());
  back = decode_rollout(lines, "/x.jsonl");
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->goal) << "a cleared goal stays cleared";
  // A goal record that cannot be read changes nothing.
  lines.push_back(R"({"timestamp":"2025-11-07T07:20:00.123Z","type":"event_msg",)"
                  R"("payload":{"type":"thread_goal_updated","goal":{"objective":1}}})");
  back = decode_rollout(lines, "/x.jsonl");
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->goal);
}

// The local index and the PostgreSQL rows keep a thread's updated_at from
// the stamp encode_record reports; a reader computes it from the lines. They
// agree only if every line of a record carries the one stamp, and the stamp
// says whether a line a reader dates by was written (store_restart once saw
// them a second apart).
TEST(rollout_format, a_records_lines_carry_one_stamp_that_says_whether_a_reader_dates_by_it) {
  auto t = sample();
  auto lines = encode_thread(t);
  const int64_t late = 1862500000999;  // the last millisecond of its second
  line_stamp started{late};
  auto turn = encode_record(t, turn_started_record{"turn-9", 1862499999}, started);
  ASSERT_FALSE(turn.empty());
  for (auto& l : turn) EXPECT_EQ(json::parse(l)["timestamp"], rfc3339_ms(late));
  EXPECT_TRUE(started.dated);
  lines.insert(lines.end(), turn.begin(), turn.end());
  auto back = decode_rollout(lines, "/x.jsonl");
  ASSERT_TRUE(back) << to_string(back.error());
  EXPECT_EQ(back->meta.updated_at, late / 1000);

  line_stamp compacted{late + 5000};
  auto summary = encode_record(t, compacted_record{"turn-9", "summary", {}}, compacted);
  ASSERT_FALSE(summary.empty());
  EXPECT_FALSE(compacted.dated) << "a compacted line does not date the thread";
  lines.insert(lines.end(), summary.begin(), summary.end());
  back = decode_rollout(lines, "/x.jsonl");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->meta.updated_at, late / 1000);
}

TEST(rollout_format, helpers) {
  EXPECT_EQ(rfc3339_ms(1762500000123), "2025-11-07T07:20:00.123Z");
  EXPECT_EQ(parse_rfc3339_ms("2025-11-07T07:20:00.123Z"), 1762500000123);
  EXPECT_EQ(parse_rfc3339_ms("2025-11-07T07:20:00Z"), 1762500000000);
  EXPECT_EQ(parse_rfc3339_ms("garbage"), 0);
  EXPECT_EQ(shell_join({"/bin/bash", "-lc", "make test"}), "/bin/bash -lc 'make test'");
  EXPECT_EQ(shell_join({"echo", "it's"}), R"(echo 'it'\''s')");
  EXPECT_EQ(path_to_file_uri("/a b/c%d"), "file:///a%20b/c%25d");
  EXPECT_EQ(file_uri_to_path("file:///a%20b/c%25d"), "/a b/c%d");
  EXPECT_EQ(file_uri_to_path("/plain"), "/plain");
}

// A rollout's URIs come from disk: an escape that is not two hex digits stays
// as written, and never throws (std::stoi did on "%v/", rollout_fuzzer).
TEST(rollout_format, a_file_uri_with_a_bad_escape_keeps_it_as_written) {
  EXPECT_EQ(file_uri_to_path("file:///sr%v/app"), "/sr%v/app");
  EXPECT_EQ(file_uri_to_path("file:///a%-1b"), "/a%-1b");
  EXPECT_EQ(file_uri_to_path("file:///a%2Gb"), "/a%2Gb");
  EXPECT_EQ(file_uri_to_path("file:///a%4"), "/a%4");
  EXPECT_EQ(file_uri_to_path("file:///a%"), "/a%");
  EXPECT_EQ(file_uri_to_path("file:///a%4a%4A"), "/aJJ");
}

}  // namespace
}  // namespace parley::store
