// Real subprocesses through the reactor: output and exit arrive as messages.

#include "actors/process_reactor.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <condition_variable>
#include <filesystem>
#include <gtest/gtest.h>
#include <mutex>

#include "actors/runtime.hpp"

namespace parley {
namespace {

using namespace std::chrono_literals;

struct collected {
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

exec_actor::behavior_type probe(exec_actor::pointer, std::shared_ptr<collected> c) {
  return {
      [c](atom::output, const std::string& chunk) {
        std::lock_guard<std::mutex> lock{c->mtx};
        EXPECT_FALSE(c->exit) << "output after exit";
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

class process_reactor_test : public ::testing::Test {
 protected:
  process_reactor_test() : sys(configured()) {}
  static caf::actor_system_config& configured() {
    static caf::actor_system_config cfg;
    static bool once = [] {
      configure_scheduler(cfg, 2);
      return true;
    }();
    (void)once;
    return cfg;
  }
  std::shared_ptr<collected> run(const std::string& command, const std::string& cwd = "/") {
    auto c = std::make_shared<collected>();
    auto sink = sys.spawn(probe, c);
    auto pid = reactor.spawn(command, cwd, sink);
    EXPECT_TRUE(pid) << "spawn failed";
    last_pid = pid ? *pid : 0;
    return c;
  }
  caf::actor_system sys;
  process_reactor reactor;
  int64_t last_pid = 0;
};

TEST_F(process_reactor_test, streams_stdout_and_stderr_then_the_exit_code) {
  auto c = run("echo one; echo two >&2; exit 3");
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->output, "one\ntwo\n");
  EXPECT_EQ(c->exit->exit_code, 3);
  EXPECT_EQ(c->exit->pid, last_pid);
  EXPECT_EQ(c->exit_messages, 1);
}

TEST_F(process_reactor_test, runs_in_the_given_cwd_with_no_stdin) {
  auto dir = std::filesystem::temp_directory_path();
  auto c = run("pwd; cat", dir.string());
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->output, std::filesystem::canonical(dir).string() + "\n");
  EXPECT_EQ(c->exit->exit_code, 0);
}

TEST_F(process_reactor_test, kill_ends_the_whole_process_group) {
  auto c = run("sleep 30 & sleep 30; echo never");
  std::this_thread::sleep_for(100ms);
  reactor.kill(last_pid);
  ASSERT_TRUE(c->wait(10s)) << "killed group did not finish";
  EXPECT_EQ(c->exit->exit_code, 128 + 9);
  EXPECT_EQ(c->output, "");
}

TEST_F(process_reactor_test, leftover_background_jobs_do_not_hold_the_command_open) {
  auto start = std::chrono::steady_clock::now();
  auto c = run("sleep 30 & echo done");
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->output, "done\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST_F(process_reactor_test, a_bad_cwd_reports_failure) {
  auto c = std::make_shared<collected>();
  auto sink = sys.spawn(probe, c);
  auto pid = reactor.spawn("true", "/definitely/not/here", sink);
  if (pid) {
    ASSERT_TRUE(c->wait(10s));
    EXPECT_NE(c->exit->exit_code, 0);
  }
}

}  // namespace
}  // namespace parley
