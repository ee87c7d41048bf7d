// The WebSocket backpressure rule, step by step: below half the bound
// everything passes; past half, requests (and only requests) are answered
// -32001; past the bound the client is to be disconnected.
#include "transport/outgoing_queue.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace parley::ws {
namespace {

const std::string request = R"({"id":7,"method":"thread/list","params":{}})";
const std::string string_id_request = R"({"id":"abc","method":"thread/list","params":{}})";
const std::string reply = R"({"id":0,"result":{"decision":"accept"}})";
const std::string notification = R"({"method":"initialized"})";

TEST(OutgoingQueue, BelowHalfItsBoundNothingIsRefused) {
  outgoing_queue q{100};
  ASSERT_TRUE(q.push(std::string(50, 'x')));
  EXPECT_FALSE(q.overloaded());
  EXPECT_FALSE(q.refusal(request).has_value());
}

TEST(OutgoingQueue, PastHalfARequestIsAnsweredServerOverloaded) {
  outgoing_queue q{100};
  ASSERT_TRUE(q.push(std::string(51, 'x')));
  ASSERT_TRUE(q.overloaded());
  auto refused = q.refusal(request);
  ASSERT_TRUE(refused.has_value());
  auto j = nlohmann::json::parse(*refused);
  EXPECT_EQ(j["id"], 7);
  EXPECT_EQ(j["error"]["code"], -32001);
  EXPECT_EQ(j["error"]["message"], "Server overloaded; retry later.");
  EXPECT_EQ(nlohmann::json::parse(*q.refusal(string_id_request))["id"], "abc");
}

TEST(OutgoingQueue, RepliesAndNotificationsAreNeverRefused) {
  outgoing_queue q{100};
  ASSERT_TRUE(q.push(std::string(90, 'x')));
  EXPECT_FALSE(q.refusal(reply).has_value()) << "a refused reply would leave an approval waiting";
  EXPECT_FALSE(q.refusal(notification).has_value());
  EXPECT_FALSE(q.refusal("not json").has_value()) << "the session's own checks answer it";
}

TEST(OutgoingQueue, PastTheBoundTheClientIsToBeDisconnected) {
  outgoing_queue q{100};
  ASSERT_TRUE(q.push(std::string(60, 'x')));
  ASSERT_TRUE(q.push(std::string(40, 'y')));  // exactly the bound is allowed
  EXPECT_FALSE(q.push("z"));
  EXPECT_EQ(q.bytes(), 100u) << "the frame past the bound is dropped";
}

TEST(OutgoingQueue, WritingDrainsItBackBelowHalf) {
  outgoing_queue q{100};
  ASSERT_TRUE(q.push(std::string(30, 'a')));
  ASSERT_TRUE(q.push(std::string(30, 'b')));
  ASSERT_TRUE(q.overloaded());
  EXPECT_EQ(q.front()[0], 'a');
  q.pop();
  EXPECT_FALSE(q.overloaded());
  EXPECT_FALSE(q.refusal(request).has_value());
  EXPECT_EQ(q.front()[0], 'b');
  q.pop();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
}

}  // namespace
}  // namespace parley::ws
