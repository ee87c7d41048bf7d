// thread/turns/list as a pure function: pages in both directions, cursors
// that continue and reverse, and the item detail asked for.

#include "transport/turn_pages.hpp"

#include <gtest/gtest.h>

namespace parley::rpc {
namespace {

std::vector<protocol::turn> five_turns() {
  std::vector<protocol::turn> turns;
  for (int i = 1; i <= 5; ++i) {
    protocol::turn t;
    t.id = "t" + std::to_string(i);
    protocol::user_message_item user;
    user.id = "u" + std::to_string(i);
    protocol::agent_message_item first, last;
    first.id = "a" + std::to_string(i);
    last.id = "z" + std::to_string(i);
    protocol::command_execution_item cmd;
    cmd.id = "c" + std::to_string(i);
    t.items = {user, first, cmd, last};
    turns.push_back(t);
  }
  return turns;
}

std::vector<std::string> ids(const protocol::thread_turns_list_response& page) {
  std::vector<std::string> out;
  for (const auto& t : page.data) out.push_back(t.id);
  return out;
}

protocol::thread_turns_list_params params(std::optional<uint32_t> limit, bool ascending = false,
                                          std::optional<std::string> cursor = std::nullopt) {
  protocol::thread_turns_list_params p;
  p.thread_id = "thr";
  p.limit = limit;
  p.ascending = ascending;
  p.cursor = std::move(cursor);
  return p;
}

TEST(TurnPages, newest_first_by_default_and_the_cursor_continues) {
  auto first = page_turns(five_turns(), params(2));
  ASSERT_TRUE(first);
  EXPECT_EQ(ids(*first), (std::vector<std::string>{"t5", "t4"}));
  ASSERT_TRUE(first->next_cursor);
  auto second = page_turns(five_turns(), params(2, false, first->next_cursor));
  EXPECT_EQ(ids(*second), (std::vector<std::string>{"t3", "t2"}));
  auto last = page_turns(five_turns(), params(2, false, second->next_cursor));
  EXPECT_EQ(ids(*last), (std::vector<std::string>{"t1"}));
  EXPECT_FALSE(last->next_cursor);  // nothing more
}

TEST(TurnPages, the_backwards_cursor_reverses_and_shows_the_anchor_again) {
  auto page = page_turns(five_turns(), params(2, false, std::string{"after:t5"}));
  EXPECT_EQ(ids(*page), (std::vector<std::string>{"t4", "t3"}));
  auto back = page_turns(five_turns(), params(3, true, page->backwards_cursor));
  EXPECT_EQ(ids(*back), (std::vector<std::string>{"t4", "t5"}));
}

TEST(TurnPages, oldest_first_when_asked_and_everything_without_a_limit) {
  auto page = page_turns(five_turns(), params(std::nullopt, true));
  EXPECT_EQ(ids(*page), (std::vector<std::string>{"t1", "t2", "t3", "t4", "t5"}));
  EXPECT_FALSE(page->next_cursor);
  EXPECT_EQ(page->backwards_cursor, "from:t1");
}

TEST(TurnPages, a_cursor_that_names_no_turn_is_an_error) {
  EXPECT_FALSE(page_turns(five_turns(), params(2, false, std::string{"after:gone"})));
  EXPECT_FALSE(page_turns(five_turns(), params(2, false, std::string{"t3"})));
  auto empty = page_turns({}, params(2));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->data.empty());
  EXPECT_FALSE(empty->backwards_cursor);
}

TEST(TurnPages, views_show_none_a_summary_or_every_item) {
  auto p = params(1);
  p.items_view = "summary";
  auto summary = page_turns(five_turns(), p)->data.at(0);
  ASSERT_EQ(summary.items.size(), 2u);  // the user's message and the last answer
  EXPECT_EQ(std::get<protocol::user_message_item>(summary.items[0]).id, "u5");
  EXPECT_EQ(std::get<protocol::agent_message_item>(summary.items[1]).id, "z5");
  EXPECT_EQ(summary.items_view, "summary");
  p.items_view = "notLoaded";
  EXPECT_TRUE(page_turns(five_turns(), p)->data.at(0).items.empty());
  p.items_view = "full";
  EXPECT_EQ(page_turns(five_turns(), p)->data.at(0).items.size(), 4u);
}

}  // namespace
}  // namespace parley::rpc
