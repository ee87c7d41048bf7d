// stdio's writer (issue 22): the pressure it signals must arrive in the order
// its queue crossed the marks. Lines are pushed on one thread (the
// line_writer actor's) and written on another (its own), and each side
// signals the crossings it causes: a signal sent after its lock was let go
// could be overtaken by the other side's, leaving the connection "behind"
// for good with an empty queue, every stream of the client held (the
// 1,000-thread catch-up that stalled).

#include "transport/fd_writer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace parley {
namespace {

using namespace std::chrono_literals;

/// A notification line as the server writes one, exactly `n` bytes long.
std::string delta_line(size_t n) {
  std::string head = R"({"method":"item/agentMessage/delta","params":")";
  std::string tail = "\"}\n";
  return head + std::string(n - head.size() - tail.size(), 'x') + tail;
}

// The pusher's signal (behind: true) is slow to leave, as a thread
// descheduled between its crossing and its send is: the writer thread
// meanwhile writes the line out and crosses back (false). What the hooks
// hear, in order, must end with the queue's own state: not behind.
TEST(FdWriter, PressureSignalsArriveInTheOrderOfTheCrossings) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<bool> heard;
  bool slowed = false;
  {
    // High-water mark 2 KiB, low-water 1 KiB; the pipe takes the line at once.
    fd_writer out(fds[1], 16 * 1024, nullptr);
    fd_writer::hooks hooks;
    hooks.on_pressure = [&](bool on) {
      std::unique_lock<std::mutex> lock{mtx};
      if (on && !slowed) {
        slowed = true;
        // Gives the writer thread time to cross back before this is heard.
        cv.wait_for(lock, 300ms, [&] { return !heard.empty(); });
      }
      heard.push_back(on);
      cv.notify_all();
    };
    out.set_hooks(std::move(hooks));
    out.push(delta_line(3000));  // past the high-water mark, written at once
    for (int i = 0; i < 200 && out.queued_bytes() > 0; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(out.queued_bytes(), 0u);
    std::unique_lock<std::mutex> lock{mtx};
    cv.wait_for(lock, 2s, [&] { return heard.size() >= 2; });
    EXPECT_EQ(heard, (std::vector<bool>{true, false}))
        << "the last signal heard must be the queue's state (caught up)";
    lock.unlock();
    out.finish(true);
  }
  ::close(fds[0]);
  ::close(fds[1]);
}

// A burst pushed at once is written whole and in order, after the lines
// pushed before it, and the caller's vector is left empty.
TEST(FdWriter, ABurstIsWrittenWholeAndInOrder) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string expected;
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    for (;;) {
      auto n = ::read(fds[0], buf, sizeof(buf));
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
  });
  {
    fd_writer out(fds[1], 64 * 1024 * 1024, nullptr);
    for (int b = 0; b < 20; ++b) {
      std::string single = "single " + std::to_string(b) + "\n";
      expected += single;
      out.push(single);
      std::vector<std::string> burst;
      for (int i = 0; i < 50; ++i) {
        // Lines of varying length, some longer than a pipe's atomic write.
        burst.push_back("burst " + std::to_string(b) + " line " + std::to_string(i) + " " +
                        std::string(static_cast<size_t>((i * 397) % 6000), 'a' + i % 26) + "\n");
        expected += burst.back();
      }
      out.push_all(burst);
      EXPECT_TRUE(burst.empty());
    }
    out.finish(false);
  }
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "the bytes written differ from the lines pushed, in order";
}

}  // namespace
}  // namespace parley
