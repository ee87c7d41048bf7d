// The chat's approval queue alone: arrival order, one current request,
// removal wherever a request is, abort all, duplicates.

#include "transport/chat/approval_queue.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

using protocol::json;
using protocol::request_id;

constexpr const char* command = "item/commandExecution/requestApproval";
constexpr const char* file_change = "item/fileChange/requestApproval";

json params_of(const std::string& thread) { return json{{"threadId", thread}, {"itemId", "i"}}; }

TEST(approval_queue, empty_has_no_current) {
  approval_queue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.current(), nullptr);
  EXPECT_FALSE(q.advance().has_value());
  EXPECT_TRUE(q.abort_all().empty());
}

TEST(approval_queue, requests_are_asked_in_arrival_order) {
  approval_queue q;
  EXPECT_TRUE(q.enqueue(request_id{7}, command, params_of("t1")));
  EXPECT_TRUE(q.enqueue(request_id{std::string{"x"}}, file_change, params_of("t2"),
                        json::array({{{"path", "/a"}}})));
  EXPECT_TRUE(q.enqueue(request_id{3}, command, params_of("t3")));
  ASSERT_NE(q.current(), nullptr);
  EXPECT_EQ(q.current()->id, request_id{7});
  EXPECT_EQ(q.current()->thread_id, "t1");
  EXPECT_EQ(q.current()->method, command);
  EXPECT_EQ(q.size(), 3u);
}

TEST(approval_queue, advance_removes_the_current_and_the_next_becomes_current) {
  approval_queue q;
  q.enqueue(request_id{1}, command, params_of("t1"));
  q.enqueue(request_id{2}, file_change, params_of("t2"), json::array({{{"path", "/a"}}}));
  auto answered = q.advance();
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(answered->id, request_id{1});
  ASSERT_NE(q.current(), nullptr);
  EXPECT_EQ(q.current()->id, request_id{2});
  EXPECT_EQ(q.current()->context[0]["path"], "/a");  // the context travels with it
  EXPECT_EQ(q.size(), 1u);
  q.advance();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.current(), nullptr);
}

TEST(approval_queue, resolve_removes_the_current_request) {
  approval_queue q;
  q.enqueue(request_id{1}, command, params_of("t1"));
  q.enqueue(request_id{2}, command, params_of("t2"));
  EXPECT_TRUE(q.resolve(request_id{1}));
  ASSERT_NE(q.current(), nullptr);
  EXPECT_EQ(q.current()->id, request_id{2});
  EXPECT_EQ(q.size(), 1u);
}

TEST(approval_queue, resolve_removes_a_queued_request_and_keeps_the_current) {
  approval_queue q;
  q.enqueue(request_id{1}, command, params_of("t1"));
  q.enqueue(request_id{2}, command, params_of("t2"));
  q.enqueue(request_id{3}, command, params_of("t3"));
  EXPECT_TRUE(q.resolve(request_id{2}));
  EXPECT_EQ(q.current()->id, request_id{1});
  EXPECT_EQ(q.size(), 2u);
  q.advance();
  EXPECT_EQ(q.current()->id, request_id{3});
}

TEST(approval_queue, resolve_of_an_unknown_or_answered_request_changes_nothing) {
  approval_queue q;
  q.enqueue(request_id{1}, command, params_of("t1"));
  q.advance();
  EXPECT_FALSE(q.resolve(request_id{1}));  // answered by us, then resolved by the server
  q.enqueue(request_id{2}, command, params_of("t1"));
  EXPECT_FALSE(q.resolve(request_id{99}));
  EXPECT_EQ(q.size(), 1u);
}

TEST(approval_queue, abort_all_returns_every_pending_id_current_first_and_empties) {
  approval_queue q;
  q.enqueue(request_id{4}, command, params_of("t1"));
  q.enqueue(request_id{5}, file_change, params_of("t2"));
  q.enqueue(request_id{6}, command, params_of("t3"));
  auto ids = q.abort_all();
  EXPECT_EQ(ids, (std::vector<request_id>{request_id{4}, request_id{5}, request_id{6}}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.current(), nullptr);
}

TEST(approval_queue, duplicates_are_ignored) {
  approval_queue q;
  EXPECT_TRUE(q.enqueue(request_id{1}, command, params_of("t1")));
  EXPECT_TRUE(q.enqueue(request_id{2}, command, params_of("t2")));
  EXPECT_FALSE(q.enqueue(request_id{1}, command, params_of("t1")));
  EXPECT_EQ(q.size(), 2u);
  q.advance();
  EXPECT_EQ(q.current()->id, request_id{2});
  // An id is only a duplicate while it is pending.
  EXPECT_TRUE(q.enqueue(request_id{1}, command, params_of("t1")));
}

TEST(approval_queue, has_thread_tells_which_threads_wait_on_an_answer) {
  approval_queue q;
  q.enqueue(request_id{1}, command, params_of("t1"));
  q.enqueue(request_id{2}, command, params_of("t2"));
  EXPECT_TRUE(q.has_thread("t1"));
  EXPECT_TRUE(q.has_thread("t2"));
  EXPECT_FALSE(q.has_thread("t3"));
  q.resolve(request_id{1});
  EXPECT_FALSE(q.has_thread("t1"));
}

}  // namespace
}  // namespace parley
