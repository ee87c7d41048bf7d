// Real subprocesses through the reactor: output and exit arrive as messages.

#include "actors/threads/process_reactor.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <condition_variable>
#include <filesystem>
#include <gtest/gtest.h>
#include <mutex>
#include <thread>

#include "actors/runtime/runtime.hpp"

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

process_sink_actor::behavior_type probe(process_sink_actor::pointer, std::shared_ptr<collected> c) {
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
    last_id = reactor.spawn(command, cwd, sink);
    return c;
  }
  std::shared_ptr<collected> run(const spawn_spec& spec) {
    auto c = std::make_shared<collected>();
    auto sink = sys.spawn(probe, c);
    last_id = reactor.spawn(spec, sink);
    return c;
  }
  caf::actor_system sys;
  process_reactor reactor;
  process_id last_id = 0;
};

TEST_F(process_reactor_test, streams_stdout_and_stderr_then_the_exit_code) {
  auto c = run("echo one; echo two >&2; exit 3");
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->output, "one\ntwo\n");
  EXPECT_EQ(c->exit->exit_code, 3);
  EXPECT_GT(c->exit->pid, 0);
  EXPECT_EQ(c->exit->not_started, "");
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
  reactor.kill(last_id);
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
  reactor.spawn("true", "/definitely/not/here", sink);
  ASSERT_TRUE(c->wait(10s));
  EXPECT_NE(c->exit->exit_code, 0);
}

TEST_F(process_reactor_test, spawn_passes_argv_words_untouched_and_searches_path) {
  spawn_spec spec;
  spec.argv = {"printf", "%s|", "a b", "c  d", "$HOME", "*"};
  auto c = run(spec);
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->output, "a b|c  d|$HOME|*|");
  EXPECT_EQ(c->exit->exit_code, 0);
}

TEST_F(process_reactor_test, spawn_delivers_stdin_data_byte_exact) {
  std::string data;
  data.reserve(1u << 20);
  for (size_t i = 0; i < (1u << 20); ++i) data.push_back(static_cast<char>((i * 131u + i / 7u) & 0xFFu));
  spawn_spec spec;
  spec.argv = {"cat"};
  spec.stdin_data = data;
  auto c = run(spec);
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->exit->exit_code, 0);
  ASSERT_EQ(c->output.size(), data.size());
  EXPECT_TRUE(c->output == data) << "stdin came back altered";
}

// Writes sent the moment the process is asked for, at varied delays so they
// meet its start every way: before it, with it in one batch of the reactor
// (where they once lost their bytes: deque::insert of an empty range
// self-moved them), and after it.
TEST_F(process_reactor_test, writes_racing_the_start_reach_stdin_whole_and_in_order) {
  int lost = 0;
  for (int k = 0; k < 300; ++k) {
    spawn_spec spec;
    spec.argv = {"cat"};
    spec.stdin_pipe = true;
    auto c = run(spec);
    if (k % 3 != 0) std::this_thread::sleep_for(std::chrono::microseconds(k % 700));
    reactor.write_stdin(last_id, "hello\n", false);
    reactor.write_stdin(last_id, "more", true);
    ASSERT_TRUE(c->wait(10s)) << "run " << k;
    if (c->output != "hello\nmore") ++lost;
  }
  EXPECT_EQ(lost, 0) << "runs whose stdin lost bytes";
}

TEST_F(process_reactor_test, spawn_with_empty_stdin_data_gives_immediate_eof) {
  spawn_spec spec;
  spec.argv = {"/bin/sh", "-c", "wc -c"};
  spec.stdin_data = std::string{};
  auto c = run(spec);
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->output, "0\n");
}

TEST_F(process_reactor_test, spawn_can_keep_stderr_out_of_the_output) {
  spawn_spec spec;
  spec.argv = {"/bin/sh", "-c", "echo out; echo 'expected test noise on stderr' >&2; echo more"};
  spec.merge_stderr = false;
  auto c = run(spec);
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->output, "out\nmore\n");
  EXPECT_EQ(c->exit->exit_code, 0);
}

TEST_F(process_reactor_test, spawn_runs_in_the_given_cwd) {
  auto dir = std::filesystem::temp_directory_path();
  spawn_spec spec;
  spec.argv = {"pwd"};
  spec.cwd = dir.string();
  auto c = run(spec);
  ASSERT_TRUE(c->wait(10s));
  EXPECT_EQ(c->output, std::filesystem::canonical(dir).string() + "\n");
}

TEST_F(process_reactor_test, spawn_of_a_missing_program_fails_without_a_process) {
  spawn_spec spec;
  spec.argv = {"/definitely/not/here", "x"};
  auto c = run(spec);
  ASSERT_TRUE(c->wait(10s));
  EXPECT_NE(c->exit->not_started.find("/definitely/not/here"), std::string::npos)
      << c->exit->not_started;
  EXPECT_EQ(c->exit->exit_code, 127);
  EXPECT_EQ(c->exit->pid, 0);
  EXPECT_EQ(c->output, "");
  spec.argv = {"parley-no-such-program-in-path"};
  auto in_path = run(spec);
  ASSERT_TRUE(in_path->wait(10s));
  EXPECT_NE(in_path->exit->not_started, "");
  spec.argv.clear();
  auto empty = run(spec);
  ASSERT_TRUE(empty->wait(10s));
  EXPECT_NE(empty->exit->not_started, "");
}

}  // namespace
}  // namespace parley
