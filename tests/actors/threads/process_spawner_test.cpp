// The reactor's spawner threads: starts are queued off the actors' workers,
// and a start that is killed (or shut down) before it happened never runs.
// A gate in front of each start holds one in flight, so every case is
// decided by events, not timing.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <condition_variable>
#include <filesystem>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

#include "actors/threads/process_reactor.hpp"
#include "actors/runtime/runtime.hpp"

namespace parley {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

struct spawned_output {
  std::mutex mtx;
  std::condition_variable cv;
  std::string output;
  std::optional<exit_info> exit;
  int exit_messages = 0;

  bool wait(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock{mtx};
    return cv.wait_for(lock, timeout, [this] { return exit.has_value(); });
  }
};

process_sink_actor::behavior_type output_probe(process_sink_actor::pointer, std::shared_ptr<spawned_output> c) {
  return {
      [c](atom::output, const std::string& chunk) {
        std::lock_guard<std::mutex> lock{c->mtx};
        c->output += chunk;
      },
      [c](atom::exited, const exit_info& info) {
        std::lock_guard<std::mutex> lock{c->mtx};
        c->exit = info;
        ++c->exit_messages;
        c->cv.notify_all();
      },
  };
}

/// Holds every spawner at its start until released.
struct gate {
  std::mutex mtx;
  std::condition_variable cv;
  int entered = 0;
  bool released = false;

  void pass() {
    std::unique_lock<std::mutex> lock{mtx};
    ++entered;
    cv.notify_all();
    cv.wait(lock, [this] { return released; });
  }
  bool await_entered(int n = 1) {
    std::unique_lock<std::mutex> lock{mtx};
    return cv.wait_for(lock, std::chrono::seconds(10), [this, n] { return entered >= n; });
  }
  void release() {
    std::lock_guard<std::mutex> lock{mtx};
    released = true;
    cv.notify_all();
  }
};

caf::actor_system_config& configured() {
  static caf::actor_system_config cfg;
  static bool once = [] {
    configure_scheduler(cfg, 2);
    return true;
  }();
  (void)once;
  return cfg;
}

class process_spawner_test : public ::testing::Test {
 protected:
  // One spawner unless a test says otherwise: "held" then means "the next
  // start waits in the queue".
  explicit process_spawner_test(unsigned spawners = 1)
      : sys(configured()),
        dir(fs::temp_directory_path() / ("parley-spawner-" + std::to_string(::getpid()))),
        reactor(std::make_unique<process_reactor>(
            process_reactor_options{[this] { held.pass(); }, spawners, /*telemetry=*/nullptr})) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~process_spawner_test() override {
    held.release();
    reactor.reset();
    fs::remove_all(dir);
  }
  std::pair<process_id, std::shared_ptr<spawned_output>> start(const std::string& command) {
    auto c = std::make_shared<spawned_output>();
    auto id = reactor->spawn(command, dir.string(), sys.spawn(output_probe, c));
    return {id, c};
  }
  caf::actor_system sys;
  fs::path dir;
  gate held;
  std::unique_ptr<process_reactor> reactor;
};

TEST_F(process_spawner_test, a_start_killed_while_queued_never_runs) {
  auto [first, a] = start("true");
  ASSERT_TRUE(held.await_entered());  // the spawner holds `first`; the next one waits in the queue
  auto [second, b] = start("touch second-ran");
  reactor->kill(second);
  held.release();
  ASSERT_TRUE(b->wait(10s));
  EXPECT_EQ(b->exit->not_started, "killed before it started");
  EXPECT_EQ(b->exit->exit_code, 128 + 9);
  EXPECT_EQ(b->exit->pid, 0);
  ASSERT_TRUE(a->wait(10s));
  EXPECT_EQ(a->exit->exit_code, 0);
  EXPECT_FALSE(fs::exists(dir / "second-ran"));
  EXPECT_EQ(b->exit_messages, 1);
}

TEST_F(process_spawner_test, a_start_killed_while_in_progress_never_runs) {
  auto [first, a] = start("touch first-ran");
  ASSERT_TRUE(held.await_entered());  // taken off the queue, about to be created
  reactor->kill(first);
  held.release();
  ASSERT_TRUE(a->wait(10s));
  EXPECT_EQ(a->exit->not_started, "killed before it started");
  EXPECT_EQ(a->output, "");
  EXPECT_FALSE(fs::exists(dir / "first-ran"));
  // The spawner goes on with later starts.
  auto [next, n] = start("echo next");
  ASSERT_TRUE(n->wait(10s));
  EXPECT_EQ(n->output, "next\n");
}

TEST_F(process_spawner_test, a_failed_start_reports_why_and_later_starts_still_run) {
  held.release();
  spawn_spec spec;
  spec.argv = {"/definitely/not/here"};
  auto c = std::make_shared<spawned_output>();
  reactor->spawn(spec, sys.spawn(output_probe, c));
  auto [next, n] = start("echo after");
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->exit->exit_code, 127);
  EXPECT_NE(c->exit->not_started.find("/definitely/not/here"), std::string::npos);
  ASSERT_TRUE(n->wait(10s));
  EXPECT_EQ(n->output, "after\n");
}

TEST_F(process_spawner_test, many_concurrent_starts_each_exit_once_with_their_output) {
  held.release();
  constexpr int per_caller = 150;
  std::vector<std::shared_ptr<spawned_output>> runs[2];
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t)
    callers.emplace_back([&, t] {
      for (int k = 0; k < per_caller; ++k)
        runs[t].push_back(start("echo " + std::to_string(t) + "-" + std::to_string(k)).second);
    });
  for (auto& t : callers) t.join();
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < per_caller; ++k) {
      auto& c = runs[t][static_cast<size_t>(k)];
      ASSERT_TRUE(c->wait(60s));
      std::lock_guard<std::mutex> lock{c->mtx};
      EXPECT_EQ(c->exit->exit_code, 0);
      EXPECT_EQ(c->exit_messages, 1);
      EXPECT_EQ(c->output, std::to_string(t) + "-" + std::to_string(k) + "\n");
    }
}

TEST_F(process_spawner_test, stop_with_queued_starts_runs_none_of_them_and_tells_each) {
  auto [first, a] = start("touch first-ran");
  ASSERT_TRUE(held.await_entered());
  std::vector<std::shared_ptr<spawned_output>> queued;
  for (int k = 0; k < 20; ++k) queued.push_back(start("touch ran-" + std::to_string(k)).second);
  std::thread stopper{[this] { reactor->stop(); }};
  // stop() tells every queued start at once, while the first is still held.
  for (auto& c : queued) {
    ASSERT_TRUE(c->wait(10s));
    EXPECT_EQ(c->exit->not_started, "shutting down");
  }
  held.release();
  stopper.join();
  ASSERT_TRUE(a->wait(10s));
  EXPECT_EQ(a->exit->not_started, "shutting down");
  for (auto& entry : fs::directory_iterator(dir)) ADD_FAILURE() << "ran: " << entry.path();
  // After stop, a start is refused at once.
  auto [late, l] = start("touch late-ran");
  ASSERT_TRUE(l->wait(10s));
  EXPECT_EQ(l->exit->not_started, "shutting down");
}

class two_spawners_test : public process_spawner_test {
 protected:
  two_spawners_test() : process_spawner_test(2) {}
};

// One spawner halves the start rate on two cores (each posix_spawn waits for
// its child's exec); two starts are in creation at the same moment here.
TEST_F(two_spawners_test, two_starts_are_created_at_once) {
  auto [first, a] = start("echo one");
  auto [second, b] = start("echo two");
  ASSERT_TRUE(held.await_entered(2));  // both inside a start, neither finished
  held.release();
  ASSERT_TRUE(a->wait(10s));
  ASSERT_TRUE(b->wait(10s));
  EXPECT_EQ(a->output, "one\n");
  EXPECT_EQ(b->output, "two\n");
}

}  // namespace
}  // namespace parley
