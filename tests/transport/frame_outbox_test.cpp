// The WebSocket connection's outbox (issue 23): a drain is asked for once per
// burst, it takes every line put before it runs, in order, and no line is ever
// left without a drain on its way, however the two threads interleave.
#include "transport/frame_outbox.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace parley::ws {
namespace frame_outbox_test {

TEST(FrameOutbox, OnlyTheFirstLineOfABurstAsksForADrain) {
  frame_outbox box;
  EXPECT_TRUE(box.put("a", nullptr));
  EXPECT_FALSE(box.put("b", nullptr));
  EXPECT_FALSE(box.put("c", nullptr));
  auto lines = box.take();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].first, "a");
  EXPECT_EQ(lines[1].first, "b");
  EXPECT_EQ(lines[2].first, "c");
  EXPECT_TRUE(box.take().empty());
  // Drained: the next line needs a drain of its own.
  EXPECT_TRUE(box.put("d", nullptr));
}

TEST(FrameOutbox, ACreditTravelsWithItsLineUntilTaken) {
  frame_outbox box;
  auto credit = std::make_shared<int>(7);
  std::weak_ptr<int> watch = credit;
  EXPECT_TRUE(box.put("delta", std::move(credit)));
  EXPECT_FALSE(watch.expired());  // held while the line waits
  {
    auto lines = box.take();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].second.get(), watch.lock().get());
  }
  EXPECT_TRUE(watch.expired());  // given back with the taken line
}

// One thread puts (the connection), another runs the drains it asked for (the
// I/O thread): every line arrives once, in order, and when both are done
// nothing is left in the box.
TEST(FrameOutbox, EveryLineIsTakenOnceInOrderAcrossThreads) {
  constexpr int lines = 100000;
  frame_outbox box;
  std::mutex mtx;
  std::condition_variable cv;
  int drains_asked = 0;
  bool producer_done = false;
  std::vector<std::string> got;
  got.reserve(lines);
  std::thread io([&] {
    int drains_run = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock{mtx};
        cv.wait(lock, [&] { return drains_run < drains_asked || producer_done; });
        if (drains_run == drains_asked) return;
        ++drains_run;
      }
      for (auto& [line, credit] : box.take()) got.push_back(std::move(line));
    }
  });
  for (int i = 0; i < lines; ++i) {
    if (box.put(std::to_string(i), nullptr)) {
      std::lock_guard<std::mutex> lock{mtx};
      ++drains_asked;
      cv.notify_one();
    }
  }
  {
    std::lock_guard<std::mutex> lock{mtx};
    producer_done = true;
    cv.notify_one();
  }
  io.join();
  EXPECT_TRUE(box.take().empty()) << "a line was left with no drain on its way";
  ASSERT_EQ(got.size(), static_cast<size_t>(lines));
  for (int i = 0; i < lines; ++i) ASSERT_EQ(got[i], std::to_string(i)) << "at " << i;
}

}  // namespace frame_outbox_test
}  // namespace parley::ws
