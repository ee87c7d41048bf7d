// The local store under a disk that fails: a real runtime, real rollouts and
// a real SQLite index under a file layer that fails chosen system calls of
// the rollout writer. A scripted workload (threads, turns that ask to run a
// command and are accepted, reads) runs once for every call it makes, that
// call (and the next ones) failing with ENOSPC, EIO or EROFS. After each run
// the runtime stops, a fresh one opens the same home on the real disk, and:
// every turn reported completed reads back completed, every thread reported
// started reads, no item is stored twice, every call was answered.

#include <gtest/gtest.h>

#include <caf/scoped_actor.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "actors/core/errors.hpp"
#include "actors/runtime/runtime.hpp"
#include "tests/support/faulty_file_ops.hpp"
#include "tests/support/in_process_host.hpp"

namespace parley {
namespace store_faults_test {  // named: the test executables are unity builds

using namespace std::chrono_literals;
using test::recording_host;
using test::turn_params;
namespace fs = std::filesystem;

struct outcome {
  std::vector<std::string> threads;              // reported started
  std::map<std::string, std::string> completed;  // turn -> its thread, reported completed
  int refused = 0;                                // calls answered with an error
  int unanswered = 0;                             // calls or turns that never ended
  std::vector<std::string> failures;              // why turns that did not complete ended
};

runtime_config config_for(const std::string& home, std::shared_ptr<store::file_ops> ops,
                          size_t backlog) {
  runtime_config cfg;
  cfg.store = runtime_config::store_kind::local;
  cfg.home = home;
  cfg.default_cwd = home;
  cfg.store_file_ops = std::move(ops);
  cfg.store_backlog_bytes = backlog;
  cfg.scheduler_threads = 2;
  return cfg;
}

/// thread/fork or thread/archive straight to the thread manager (the
/// in-process client has neither); an error or the answer.
template <class Result, class... Ts>
caf::expected<Result> ask_manager(runtime& rt, Ts&&... xs) {
  caf::scoped_actor self{rt.system()};
  caf::expected<Result> out{caf::error{}};
  self->request(rt.threads(), std::chrono::seconds(30), std::forward<Ts>(xs)...)
      .receive([&](Result& r) { out = std::move(r); }, [&](caf::error& err) { out = err; });
  return out;
}

/// Two threads, two turns each (a command accepted, an answer), one at a
/// time; the first is forked, the second archived.
outcome run_workload(runtime& rt, const std::string& cwd) {
  outcome out;
  auto host = std::make_shared<recording_host>();
  host->decide = [](const approval_ask&, approval_reply reply) {
    reply(protocol::approval_decision::accept());
  };
  in_process_client client{rt, host};
  size_t ended = 0;
  for (int t = 0; t < 2; ++t) {
    protocol::thread_start_params sp;
    sp.cwd = cwd;
    auto started = client.start_thread(sp);
    if (!started) {
      if (is_errc(started.error(), errc::overloaded)) ++out.refused;
      else ++out.unanswered;
      continue;
    }
    auto thread = started->thread_.id;
    out.threads.push_back(thread);
    for (int k = 0; k < 2; ++k) {
      auto turn = client.start_turn(turn_params(thread, "run[escalate]: echo " + std::to_string(k)
                                                            + "\nsay: done " + std::to_string(k)));
      if (!turn) {
        if (is_errc(turn.error(), errc::overloaded)) ++out.refused;
        else ++out.unanswered;
        continue;
      }
      if (!host->wait_turns(++ended, 20s)) {
        ++out.unanswered;
        return out;
      }
      auto all = host->all<protocol::turn_completed>();
      auto& last = all.back();
      if (last.turn_.id == turn->turn_.id && last.turn_.status == protocol::turn_status::completed)
        out.completed[last.turn_.id] = thread;
      else if (last.turn_.error)
        out.failures.push_back(last.turn_.error->message);
      else
        out.failures.push_back("(no error)");
    }
    if (!client.read_thread({thread, true})) ++out.refused;  // answered, at least
    auto me = caf::actor_cast<client_actor>(client.handle());
    if (t == 0) {
      protocol::thread_fork_params fp;
      fp.thread_id = thread;
      auto fork = ask_manager<protocol::thread_session_response>(rt, atom::fork::value, fp, me);
      if (fork)
        out.threads.push_back(fork->thread_.id);  // reported started: must read back
      else if (is_errc(fork.error(), errc::unloading) || !fork.error())
        ++out.unanswered;
      else
        ++out.refused;
    } else {
      auto archived = ask_manager<protocol::thread>(rt, atom::archive::value,
                                                    protocol::thread_id_params{thread}, true, me);
      if (!archived) ++out.refused;  // answered with an error: it stays where it was
    }
  }
  return out;
}

/// Reads the home back with the real disk; failures go to gtest.
void check_home(const std::string& home, const outcome& out, const std::string& run) {
  runtime rt{config_for(home, nullptr, size_t{32} << 20)};
  auto host = std::make_shared<recording_host>();
  in_process_client client{rt, host};
  // (thread, turn) -> the turn as stored: a fork keeps its source's turn ids.
  std::map<std::pair<std::string, std::string>, protocol::turn> stored;
  for (auto& thread : out.threads) {
    auto read = client.read_thread({thread, true});
    ASSERT_TRUE(read) << run << ": thread " << thread << " reported started but unreadable: "
                      << message_of(read.error());
    std::set<std::string> items;
    for (auto& turn : read->thread_.turns) {
      EXPECT_TRUE(stored.emplace(std::make_pair(thread, turn.id), turn).second)
          << run << ": turn stored twice";
      for (auto& item : turn.items)
        EXPECT_TRUE(items.insert(protocol::item_id(item)).second)
            << run << ": item " << protocol::item_id(item) << " stored twice";
    }
  }
  for (auto& [turn, thread] : out.completed) {
    auto i = stored.find(std::make_pair(thread, turn));
    ASSERT_NE(i, stored.end()) << run << ": turn " << turn << " reported completed is lost";
    EXPECT_EQ(i->second.status, protocol::turn_status::completed)
        << run << ": turn " << turn << " reported completed reads back otherwise";
  }
}

void sweep(int err, size_t backlog, long count, long stride) {
  auto base = test::temp_dir("faults-" + std::to_string(err) + "-" + std::to_string(count));
  long total = 0;
  {
    auto clean = std::make_shared<test::faulty_file_ops>();
    auto home = base + "/clean";
    runtime rt{config_for(home, clean, backlog)};
    auto out = run_workload(rt, home);
    ASSERT_EQ(out.completed.size(), 4u);
    total = clean->calls();
  }
  ASSERT_GT(total, 10);
  int runs = 0, failed_turns = 0;
  for (long at = 0; at < total; at += stride) {
    auto home = base + "/run-" + std::to_string(at);
    auto run = "errno " + std::to_string(err) + ", calls " + std::to_string(at) + ".."
               + std::to_string(at + count - 1);
    auto ops = std::make_shared<test::faulty_file_ops>();
    ops->fail_calls(at, count, err);
    outcome out;
    {
      runtime rt{config_for(home, ops, backlog)};
      out = run_workload(rt, home);
      ops->heal();
    }
    EXPECT_EQ(out.unanswered, 0) << run;
    for (auto& why : out.failures)  // a turn the store failed says so
      EXPECT_EQ(why.rfind("the store could not keep this turn: ", 0), 0u) << run << ": " << why;
    failed_turns += static_cast<int>(4 - out.completed.size());
    check_home(home, out, run);
    ++runs;
    fs::remove_all(home);
  }
  EXPECT_GT(runs, 5);
  std::printf("errno %d: %d runs over %ld calls, %d turns not completed\n", err, runs, total,
              failed_turns);
}

// A few failed calls: records wait and are written on the next retry;
// nothing is lost and every turn completes, later.
TEST(store_faults, a_passing_fault_delays_turns_and_loses_nothing) {
  for (int err : {ENOSPC, EIO, EROFS}) sweep(err, size_t{32} << 20, 2, err == ENOSPC ? 3 : 9);
}

// A disk that stays full with a tiny cap on what may wait: turns and
// threads fail (or are refused), but what was reported stays readable.
TEST(store_faults, a_lasting_fault_fails_turns_and_keeps_what_was_reported) {
  for (int err : {ENOSPC, EIO}) sweep(err, 2, 1000000, 2);
}

}  // namespace store_faults_test
}  // namespace parley
