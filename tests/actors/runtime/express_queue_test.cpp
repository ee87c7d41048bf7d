// The scheduler's express lane (issue 23): what a marked thread queues is
// taken before the ordinary jobs already waiting, within a burst that lets
// one ordinary job through, so queued work is never starved; and in a real
// actor system on parley's scheduler an actor woken from a marked thread runs
// before the actors the workers had queued ahead of it.

#include "actors/runtime/express_queue.hpp"
#include "actors/runtime/lazy_clock_scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace parley {
namespace {
namespace express_queue_test {

using namespace std::chrono_literals;

constexpr auto patience = std::chrono::seconds(10);  // a bound, never a figure

TEST(ExpressQueue, an_express_job_is_taken_before_ordinary_ones_queued_earlier) {
  express_queue<int> q;
  q.push(1, false);
  q.push(2, false);
  q.push(10, true);
  q.push(11, true);
  q.push(3, false);
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) order.push_back(q.pop());
  EXPECT_EQ(order, (std::vector<int>{10, 11, 1, 2, 3}));  // each lane first in, first out
}

TEST(ExpressQueue, ordinary_jobs_get_one_turn_per_burst_of_express_ones) {
  express_queue<int> q{3};
  for (int i = 0; i < 3; ++i) q.push(i, false);    // ordinary: 0, 1, 2
  for (int i = 0; i < 9; ++i) q.push(100 + i, true);  // express: 100..108
  std::vector<int> order;
  for (int i = 0; i < 12; ++i) order.push_back(q.pop());
  EXPECT_EQ(order,
            (std::vector<int>{100, 101, 102, 0, 103, 104, 105, 1, 106, 107, 108, 2}));
}

TEST(ExpressQueue, a_steady_stream_of_express_jobs_does_not_starve_an_ordinary_one) {
  express_queue<int> q{4};
  q.push(-1, false);
  int taken_before = 0;
  for (int round = 0; round < 100; ++round) {
    q.push(round, true);  // a client's frame arrives before every take
    if (q.pop() == -1) break;
    ++taken_before;
  }
  EXPECT_EQ(taken_before, 4);
}

TEST(ExpressQueue, drain_hands_over_every_job_and_leaves_it_empty) {
  express_queue<int> q;
  q.push(1, false);
  q.push(2, true);
  std::vector<int> drained;
  q.drain([&](int job) { drained.push_back(job); });
  EXPECT_EQ(drained, (std::vector<int>{2, 1}));
  q.push(3, false);
  EXPECT_EQ(q.pop(), 3);  // nothing left behind from before
}

TEST(ExpressQueue, a_thread_is_ordinary_until_marked) {
  EXPECT_FALSE(enqueues_express());
  bool marked = false;
  std::thread([&] {
    enqueue_express_from_this_thread(true);
    marked = enqueues_express();
  }).join();
  EXPECT_TRUE(marked);
  EXPECT_FALSE(enqueues_express());  // the mark is the other thread's alone
}

/// Appends its name to `log` for each message.
caf::behavior recorder(caf::event_based_actor*, std::string name,
                       std::shared_ptr<std::pair<std::mutex, std::vector<std::string>>> log) {
  return {
      [name, log](int) {
        std::lock_guard<std::mutex> lock{log->first};
        log->second.push_back(name);
      },
  };
}

/// Holds the one worker until `release` is set, once `entered` is.
caf::behavior gate(caf::event_based_actor*, std::shared_ptr<std::promise<void>> entered,
                   std::shared_future<void> release) {
  return {
      [entered, release](int) {
        entered->set_value();
        release.wait();
      },
  };
}

TEST(ExpressScheduler, an_actor_woken_from_a_marked_thread_runs_before_the_queued_ones) {
  caf::actor_system_config cfg;
  use_lazy_clock_scheduler(cfg, 1);  // one worker: the order it takes jobs is the order they run
  caf::actor_system sys{cfg};
  auto log = std::make_shared<std::pair<std::mutex, std::vector<std::string>>>();
  std::vector<caf::actor> queued;
  for (int i = 0; i < 5; ++i)
    queued.push_back(sys.spawn<caf::lazy_init>(recorder, "ordinary" + std::to_string(i), log));
  auto client = sys.spawn<caf::lazy_init>(recorder, std::string{"client"}, log);
  auto entered = std::make_shared<std::promise<void>>();
  std::promise<void> release;
  auto held = sys.spawn<caf::lazy_init>(gate, entered, release.get_future().share());
  caf::anon_send(held, 0);
  ASSERT_EQ(entered->get_future().wait_for(patience), std::future_status::ready);
  for (auto& a : queued) caf::anon_send(a, 0);  // queued while the worker is held
  std::thread([&] {
    enqueue_express_from_this_thread(true);  // as the WebSocket I/O thread is
    caf::anon_send(client, 0);
  }).join();
  release.set_value();
  auto until = std::chrono::steady_clock::now() + patience;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock{log->first};
      if (log->second.size() == 6) break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "not every actor ran";
    std::this_thread::sleep_for(1ms);
  }
  std::lock_guard<std::mutex> lock{log->first};
  EXPECT_EQ(log->second.front(), "client");
  EXPECT_EQ(log->second.back(), "ordinary4");  // the ordinary ones in their order after it
  for (auto& a : queued) caf::anon_send_exit(a, caf::exit_reason::kill);
  caf::anon_send_exit(client, caf::exit_reason::kill);
  caf::anon_send_exit(held, caf::exit_reason::kill);
}

}  // namespace express_queue_test
}  // namespace
}  // namespace parley
