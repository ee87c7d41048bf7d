// params_text writes the hottest notifications without a DOM: every shape
// it writes itself must come out byte for byte as nlohmann writes it.

#include "protocol/notification_text.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "protocol/delta_text.hpp"
#include "protocol/json_codec.hpp"

namespace parley::protocol {
namespace notification_text_tests {

/// What nlohmann writes for `n`: the reference.
std::string reference(const notification& n) { return dump_line(params_of(n)); }

/// Strings that exercise the escaper and the UTF-8 check: every single
/// byte, well-formed sequences at the edges of table 3-7, and malformed
/// ones (overlong, surrogates, past U+10FFFF, cut short, stray
/// continuation bytes), alone and between plain text.
std::vector<std::string> tricky_strings() {
  std::vector<std::string> out{"",
                               "plain words",
                               "quote \" backslash \\ slash / tab \t nl \n cr \r",
                               "\b\f\x01\x1f\x7f",
                               "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                               "\xc2\x80\xdf\xbf",
                               "\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf",
                               "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
                               "\xc0\xaf",
                               "\xc1\xbf",
                               "\xe0\x80\xaf",
                               "\xed\xa0\x80",
                               "\xed\xbf\xbf",
                               "\xf0\x80\x80\xaf",
                               "\xf4\x90\x80\x80",
                               "\xf5\x80\x80\x80",
                               "\xff",
                               "\x80",
                               "\xc3",
                               "\xe2\x82",
                               "\xf0\x9f\x98",
                               "ok \xe2\x82 then more"};
  for (int c = 0; c < 256; ++c) {
    out.push_back(std::string(1, static_cast<char>(c)));
    out.push_back("a" + std::string(1, static_cast<char>(c)) + "b");
  }
  std::mt19937 rng(23);  // seeded: the same strings every run
  for (int k = 0; k < 2000; ++k) {
    std::string s(rng() % 12, '\0');
    for (auto& ch : s) ch = static_cast<char>(rng() % 256);
    out.push_back(std::move(s));
  }
  return out;
}

TEST(notification_text, message_and_command_deltas_match_nlohmann) {
  for (const auto& s : tricky_strings()) {
    notification a = agent_message_delta{"thr_" + s, "turn-1", "msg_" + s, s};
    EXPECT_EQ(params_text(a), reference(a)) << json(s).dump();
    notification c = command_output_delta{"019b-thread", s, "call_1", s + s};
    EXPECT_EQ(params_text(c), reference(c)) << json(s).dump();
  }
}

/// Whether nlohmann's strict dump takes `s` (it throws on bad UTF-8).
bool valid_utf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

// The turn writes its message's deltas with the ids escaped once
// (message_delta_text): the same bytes as nlohmann, or nothing (then
// params_text, itself checked above, writes them).
TEST(notification_text, a_message_writers_deltas_match_nlohmann) {
  const std::string thread = "019b0000-0000-7000-8000-000000000000";
  int written = 0, declined = 0;
  for (const auto& s : tricky_strings()) {
    // s as the delta, then as each of the ids.
    std::vector<agent_message_delta> cases{{thread, "019b-turn", "msg_1", s},
                                           {"thr_" + s, "turn", "msg", "w1 "},
                                           {thread, s, "msg", "a"},
                                           {thread, "turn", s + "\"", s + s}};
    for (const auto& d : cases) {
      protocol::message_delta_text writer(d.thread_id, d.turn_id, d.item_id);
      auto params = writer.params(d.delta);
      if (!params) {
        ++declined;
        // Only bad UTF-8 is left to nlohmann.
        EXPECT_FALSE(valid_utf8(d.thread_id) && valid_utf8(d.turn_id) && valid_utf8(d.item_id)
                     && valid_utf8(d.delta))
            << json(s).dump();
        continue;
      }
      ++written;
      EXPECT_EQ(*params, reference(d)) << json(s).dump();
    }
  }
  EXPECT_GT(written, 600);
  EXPECT_GT(declined, 100);
  // One writer, many deltas (the ids written once), and a huge one.
  protocol::message_delta_text writer(thread, "t\"u", "msg_\n");
  for (const auto& s : {std::string("x"), std::string(1 << 20, 'y') + "\"\x01",
                        std::string("\xe2\x82\xac"), std::string()}) {
    auto params = writer.params(s);
    ASSERT_TRUE(params);
    EXPECT_EQ(*params, reference(agent_message_delta{thread, "t\"u", "msg_\n", s}));
  }
  EXPECT_FALSE(writer.params("\xe2\x82"));  // a sequence cut short: nlohmann replaces it
  EXPECT_FALSE(protocol::message_delta_text().params("a"));  // no ids given
  EXPECT_FALSE(protocol::message_delta_text(thread, "t", "\xff").params("a"));
}

TEST(notification_text, reasoning_deltas_match_nlohmann_both_kinds) {
  for (bool summary : {true, false})
    for (int64_t index : {int64_t{0}, int64_t{7}, int64_t{-3}, INT64_MAX, INT64_MIN})
      for (const auto& s : {std::string{"thinking \"hard\"\n"}, std::string{"\xe2\x82"}}) {
        notification r = reasoning_delta{"t", "u", "rs_1", s, index, summary};
        EXPECT_EQ(params_text(r), reference(r)) << summary << " " << index;
      }
}

TEST(notification_text, status_changes_match_nlohmann_for_every_status) {
  std::vector<thread_status> statuses{
      {thread_status::kind::not_loaded, false, false},
      thread_status::idle(),
      {thread_status::kind::system_error, false, false}};
  for (bool approval : {false, true})
    for (bool input : {false, true})
      statuses.push_back({thread_status::kind::active, approval, input});
  for (const auto& st : statuses)
    for (const auto& id : {std::string{"019b0000-0000-7000-8000-000000000000"}, std::string{"\xff"}}) {
      notification n = thread_status_changed{id, st};
      EXPECT_EQ(params_text(n), reference(n)) << reference(n);
    }
}

TEST(notification_text, resolved_matches_nlohmann_for_both_kinds_of_id) {
  std::vector<request_id> ids{request_id{int64_t{0}}, request_id{int64_t{42}},
                              request_id{INT64_MAX}, request_id{INT64_MIN}};
  for (const auto& s : tricky_strings()) ids.push_back(request_id{s});
  for (const auto& id : ids)
    for (const auto& thread : {std::string{"019b0000-0000-7000-8000-000000000000"},
                               std::string{"a\"b\\c\n"}, std::string{"\xed\xa0\x80"}}) {
      notification n = server_request_resolved{thread, id};
      EXPECT_EQ(params_text(n), reference(n)) << reference(n);
    }
}

/// Every shape of the three items item_text writes, with `s` in each of
/// their strings, and the other kinds (which nlohmann writes).
std::vector<thread_item> items_with(const std::string& s) {
  std::vector<thread_item> out;
  user_message_item u{"item-" + s, {user_input::make_text(s)}, std::nullopt};
  out.push_back(u);
  user_input typed;  // built, not received: no raw object
  typed.type = s;
  typed.text = "t";
  u.content = {typed, user_input::make_text("one"), user_input::make_text("two")};
  u.client_id = s;
  out.push_back(u);
  user_input image;
  image.type = "image";
  image.raw = json{{"type", "image"}, {"url", s}, {"detail", nullptr}, {"n", 1.5}};
  u.content = {image};
  u.client_id = "c";
  out.push_back(u);
  out.push_back(user_message_item{"u", {}, std::nullopt});
  out.push_back(agent_message_item{"msg_1", s, std::nullopt});
  out.push_back(agent_message_item{s, "text", s});
  command_execution_item c;
  c.id = "call_" + s;
  c.command = "/bin/bash -lc '" + s + "'";
  c.cwd = s;
  out.push_back(c);
  c.status = item_status::declined;
  c.aggregated_output = s;
  c.exit_code = -1;
  c.duration_ms = 1234567890123;
  c.process_id = s;
  c.source = "userShell";
  using k = command_action::kind;
  c.command_actions = {{k::read, s, s, s, std::nullopt},
                       {k::read, "cat", std::nullopt, std::nullopt, std::nullopt},
                       {k::list_files, s, std::nullopt, s, std::nullopt},
                       {k::list_files, "ls", std::nullopt, std::nullopt, std::nullopt},
                       {k::search, s, std::nullopt, s, s},
                       {k::search, "rg", std::nullopt, std::nullopt, std::nullopt},
                       {k::unknown, s, std::nullopt, std::nullopt, std::nullopt}};
  out.push_back(c);
  for (auto st : {item_status::in_progress, item_status::completed, item_status::failed}) {
    c.status = st;
    c.exit_code = st == item_status::completed ? 0 : INT32_MIN;
    out.push_back(c);
  }
  out.push_back(file_change_item{});
  out.push_back(reasoning_item{});
  return out;
}

/// tricky_strings() less most of its random ones: the item and turn cases
/// write each string many times over, and stay fast.
std::vector<std::string> fewer_tricky_strings() {
  auto all = tricky_strings();
  std::vector<std::string> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (i < all.size() - 2000 || i % 10 == 0) out.push_back(all[i]);
  return out;
}

TEST(notification_text, item_starts_and_ends_match_nlohmann) {
  for (const auto& s : fewer_tricky_strings())
    for (const auto& item : items_with(s)) {
      notification started = item_started{"thr_" + s, "turn-1", item, 1764300000123};
      EXPECT_EQ(params_text(started), reference(started)) << json(s).dump();
      notification completed = item_completed{"thr", s, item, INT64_MIN};
      EXPECT_EQ(params_text(completed), reference(completed)) << json(s).dump();
    }
}

TEST(notification_text, turn_starts_and_ends_match_nlohmann) {
  std::vector<turn> turns;
  for (const auto& s : fewer_tricky_strings()) {
    turn t;
    t.id = s;
    turns.push_back(t);
    t.status = turn_status::completed;
    t.started_at = 1764300000;
    t.completed_at = 1764300001;
    t.duration_ms = 1042;
    t.items = items_with(s);
    t.items.resize(t.items.size() - 2);  // only the kinds item_text writes
    turns.push_back(t);
    t.items_view = s;
    t.items.push_back(file_change_item{});  // one nlohmann writes
    turns.push_back(t);
    t.items.clear();
    t.status = turn_status::failed;
    t.error = turn_error{s, std::nullopt, std::nullopt};
    turns.push_back(t);
    t.error = turn_error{"m", s, s};
    t.status = turn_status::interrupted;
    turns.push_back(t);
  }
  for (const auto& t : turns) {
    notification started = turn_started{"019b0000-0000-7000-8000-000000000000", t};
    EXPECT_EQ(params_text(started), reference(started)) << reference(started);
    notification completed = turn_completed{t.id, t};
    EXPECT_EQ(params_text(completed), reference(completed)) << reference(completed);
  }
}

TEST(notification_text, other_shapes_are_written_by_nlohmann) {
  notification e = error_notification{"t", "u", turn_error{"boom", "other", std::nullopt}, false};
  EXPECT_EQ(params_text(e), reference(e));
}

TEST(notification_text, append_json_string_refuses_malformed_utf8) {
  std::string out;
  EXPECT_TRUE(append_json_string(out, "a\"b"));
  EXPECT_EQ(out, R"("a\"b")");
  out.clear();
  EXPECT_FALSE(append_json_string(out, "\xed\xa0\x80"));  // a surrogate
  out.clear();
  EXPECT_FALSE(append_json_string(out, "\xc3"));  // cut short
}

}  // namespace notification_text_tests
}  // namespace parley::protocol
