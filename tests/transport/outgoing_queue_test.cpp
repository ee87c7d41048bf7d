// The backpressure rules, step by step: past an eighth of the bound the
// client presses (its streams pause) until it is back under a sixteenth;
// past half, requests (and only requests) are answered -32001; past the
// bound a notification means the client is to be disconnected, while
// replies and the server's requests have a reserve of an eighth above it.
#include "transport/outgoing_queue.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace parley::ws {
namespace {

const std::string request = R"({"id":7,"method":"thread/list","params":{}})";
const std::string string_id_request = R"({"id":"abc","method":"thread/list","params":{}})";
const std::string reply = R"({"id":0,"result":{"decision":"accept"}})";
const std::string notification = R"({"method":"initialized"})";

/// A notification as the server writes one, exactly `n` bytes long.
std::string note(size_t n) {
  std::string head = R"({"emittedAtMs":1,"method":"item/agentMessage/delta","params":")";
  std::string tail = "\"}";
  return head + std::string(n - head.size() - tail.size(), 'x') + tail;
}

/// A reply, exactly `n` bytes long.
std::string answer(size_t n) {
  std::string head = R"({"id":1,"result":")";
  std::string tail = "\"}";
  return head + std::string(n - head.size() - tail.size(), 'x') + tail;
}

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
  outgoing_queue q{1000};
  ASSERT_TRUE(q.push(note(600)));
  ASSERT_TRUE(q.push(note(400)));  // exactly the bound is allowed
  EXPECT_FALSE(q.push(note(70)));
  EXPECT_EQ(q.bytes(), 1000u) << "the frame past the bound is dropped";
}

TEST(OutgoingQueue, RepliesAndRequestsHaveAReserveAboveTheBound) {
  outgoing_queue q{1000};
  ASSERT_TRUE(q.push(note(1000)));
  EXPECT_FALSE(q.push(note(70))) << "a notification past the bound";
  ASSERT_TRUE(q.push(answer(60))) << "a reply passes a queue full of deltas";
  ASSERT_TRUE(q.push(std::string(R"({"id":3,"method":"item/commandExecution/requestApproval"})")))
      << "so does an approval request";
  EXPECT_FALSE(q.push(answer(60))) << "the reserve is an eighth of the bound: 125 bytes";
  EXPECT_LE(q.bytes(), 1000u + q.reserve());
}

TEST(OutgoingQueue, TellsNotificationsFromRepliesAndRequestsByTheirFirstKey) {
  EXPECT_TRUE(outgoing_queue::is_notification(note(100)));
  EXPECT_TRUE(outgoing_queue::is_notification(notification));
  EXPECT_FALSE(outgoing_queue::is_notification(reply));
  EXPECT_FALSE(outgoing_queue::is_notification(request));
  EXPECT_FALSE(outgoing_queue::is_notification(R"({"error":{"code":-32001},"id":1})"));
}

TEST(OutgoingQueue, PressesPastAnEighthAndLetsGoOnlyUnderASixteenth) {
  outgoing_queue q{2000};  // high-water 250, low-water 125
  ASSERT_TRUE(q.push(note(200)));
  EXPECT_FALSE(q.pressing());
  EXPECT_FALSE(q.pressure_change().has_value());
  ASSERT_TRUE(q.push(note(100)));  // 300
  EXPECT_TRUE(q.pressing());
  EXPECT_EQ(q.pressure_change(), std::optional<bool>(true));
  EXPECT_FALSE(q.pressure_change().has_value()) << "each crossing is reported once";
  q.pop();  // 100 left: under the low-water mark
  EXPECT_FALSE(q.pressing());
  EXPECT_EQ(q.pressure_change(), std::optional<bool>(false));
  ASSERT_TRUE(q.push(note(100)));  // 200: between the marks, from below
  EXPECT_FALSE(q.pressing()) << "under the high-water mark it does not press again";
  ASSERT_TRUE(q.push(note(100)));  // 300
  EXPECT_TRUE(q.pressing());
  q.pop();  // 200: between the marks, from above
  EXPECT_TRUE(q.pressing()) << "hysteresis: it keeps pressing until under the low-water mark";
  q.pop();  // 100
  EXPECT_FALSE(q.pressing());
}

TEST(OutgoingQueue, ACrossingBackAndForthBetweenCallsIsNoChange) {
  outgoing_queue q{2000};
  ASSERT_TRUE(q.push(note(300)));
  q.pop();
  EXPECT_FALSE(q.pressure_change().has_value())
      << "paused and resumed before the writer looked: nothing to signal";
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
