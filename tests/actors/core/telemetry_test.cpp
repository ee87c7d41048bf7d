// Two runtimes in one process (a host embedding parley twice) keep their own
// telemetry: live counts, approval stats and ask keys. Real runtimes, real
// subprocesses; the moments checked are awaited as events (an ask reaching
// the host, a command opening a FIFO), never slept for.

#include "actors/core/telemetry.hpp"

#include <fcntl.h>
#include <future>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/in_process_host.hpp"

namespace parley {
namespace {

using test::recording_host;
using test::temp_dir;
using test::turn_params;

std::string start_thread(in_process_client& client, const std::string& cwd) {
  protocol::thread_start_params sp;
  sp.cwd = cwd;
  auto started = client.start_thread(sp);
  EXPECT_TRUE(started) << (started ? "" : to_string(started.error()));
  return started ? started->thread_.id : std::string{};
}

/// A runtime with one thread open and nothing else going on.
void expect_only_one_idle_conversation(in_process_client& client) {
  auto c = client.counts();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->conversations, 1);
  EXPECT_EQ(c->turns, 0);
  EXPECT_EQ(c->approvals, 0);
  EXPECT_EQ(c->execs, 0);
  EXPECT_EQ(c->pending_asks, 0);
  EXPECT_EQ(c->pending_requests, 0);
  EXPECT_EQ(c->processes, 0);
}

void expect_no_approvals(const runtime& rt) {
  auto s = rt.telemetry()->approvals.snapshot();
  EXPECT_EQ(s.requested, 0);
  EXPECT_EQ(s.pending, 0);
  EXPECT_EQ(s.decided, 0);
  EXPECT_EQ(s.allowed + s.denied + s.timed_out + s.cancelled + s.failed, 0);
}

TEST(runtime_telemetry, two_runtimes_in_one_process_count_only_their_own) {
  auto dir = temp_dir("two_runtimes");
  auto fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  runtime busy;
  runtime idle;
  // The busy host holds its first ask (answered below) and declines the rest.
  std::promise<approval_reply> first_ask;
  auto host = std::make_shared<recording_host>();
  host->decide = [&, asked = false](const approval_ask& ask, approval_reply reply) mutable {
    if (asked) return reply(protocol::approval_decision::decline());
    asked = true;
    EXPECT_EQ(ask.key, 1u) << "ask keys count per runtime";
    first_ask.set_value(reply);
  };
  in_process_client client{busy, host};
  auto idle_host = std::make_shared<recording_host>();
  in_process_client idle_client{idle, idle_host};
  start_thread(idle_client, dir);
  auto thread = start_thread(client, dir);
  ASSERT_TRUE(client.start_turn(turn_params(thread, "run[escalate]: cat pipe\nrun[escalate]: touch no\nsay: done")));

  // 1. An approval waits at the busy host: counted there, and only there.
  auto held = first_ask.get_future().get();
  auto waiting = client.counts();
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->conversations, 1);
  EXPECT_EQ(waiting->turns, 1);
  EXPECT_EQ(waiting->approvals, 1);
  EXPECT_EQ(waiting->pending_asks, 1);
  EXPECT_EQ(waiting->pending_requests, 1);
  auto asked = busy.telemetry()->approvals.snapshot();
  EXPECT_EQ(asked.requested, 1);
  EXPECT_EQ(asked.pending, 1);
  expect_only_one_idle_conversation(idle_client);
  expect_no_approvals(idle);

  // 2. Accepted, the command runs: `cat` holds the FIFO open until we close
  // our end, so its exec is live while we look.
  held(protocol::approval_decision::accept());
  int writer = ::open(fifo.c_str(), O_WRONLY);  // returns once `cat` has opened it
  ASSERT_GE(writer, 0);
  auto running = client.counts();
  ASSERT_TRUE(running);
  EXPECT_EQ(running->turns, 1);
  EXPECT_EQ(running->execs, 1);
  expect_only_one_idle_conversation(idle_client);
  ::close(writer);  // `cat` reads EOF and exits 0

  // 3. The turn ends: the busy runtime decided two approvals (the second
  // declined by its host); the idle one none.
  ASSERT_TRUE(host->wait_turns(1));
  auto done = busy.telemetry()->approvals.snapshot();
  EXPECT_EQ(done.requested, 2);
  EXPECT_EQ(done.pending, 0);
  EXPECT_EQ(done.decided, 2);
  EXPECT_EQ(done.allowed, 1);
  EXPECT_EQ(done.denied, 1);
  EXPECT_EQ(done.by_client, 2);
  expect_only_one_idle_conversation(idle_client);
  expect_no_approvals(idle);
  EXPECT_EQ(idle_host->asks(), 0u);
}

TEST(runtime_telemetry, a_counted_guard_keeps_its_telemetry_alive) {
  auto telemetry = std::make_shared<runtime_telemetry>();
  std::weak_ptr<runtime_telemetry> watch = telemetry;
  auto guard = count_live(telemetry, &live_counters::turns);
  EXPECT_EQ(telemetry->counts().turns, 1);
  telemetry.reset();  // the runtime lets go first; the guard still decrements safely
  EXPECT_FALSE(watch.expired());
  guard = counted{};
  EXPECT_TRUE(watch.expired());
}

TEST(runtime_telemetry, a_moved_guard_counts_once) {
  auto telemetry = std::make_shared<runtime_telemetry>();
  {
    auto a = count_live(telemetry, &live_counters::execs);
    auto b = std::move(a);
    EXPECT_EQ(telemetry->counts().execs, 1);
  }
  EXPECT_EQ(telemetry->counts().execs, 0);
}

}  // namespace
}  // namespace parley
