// Several clients on one thread (issue 12 §4, §5), in a real runtime with
// real subprocesses: every subscribed client is asked, the first answer wins
// and runs the command exactly once, the other copies are withdrawn, a late
// answer is refused; a client that leaves withdraws nothing while another
// can answer, and the last one leaving is not an answer either: the
// approval waits for a client to come, or for its deadline.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "actors/runtime/runtime.hpp"
#include "tests/support/in_process_host.hpp"

namespace parley {
namespace {

using test::recording_host;
using test::temp_dir;
using test::turn_params;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Waits (bounded) until `pred` holds; the runtime works on its own threads.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 10s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

size_t lines_in(const std::string& path) {
  std::ifstream in{path};
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

class approval_clients : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    cfg.store = runtime_config::store_kind::memory;
    rt = std::make_unique<runtime>(cfg);
    first = std::make_shared<recording_host>();
    second = std::make_shared<recording_host>();
    a = std::make_unique<in_process_client>(*rt, first);
    protocol::thread_start_params start;
    start.cwd = dir;
    start.approval_policy_ = protocol::approval_policy::on_request();
    thread = a->start_thread(start)->thread_.id;
    b = std::make_unique<in_process_client>(*rt, second);
  }

  /// Starts a turn appending one line to `ran` per run, waits until the
  /// first client is asked, then subscribes the second one.
  void start_and_join() {
    ASSERT_TRUE(a->start_turn(turn_params(thread, "run[escalate]: echo x >> ran")));
    ASSERT_TRUE(eventually([&] { return first->asks() == 1; }));
    protocol::thread_resume_params resume;
    resume.thread_id = thread;
    ASSERT_TRUE(b->resume_thread(resume));
    ASSERT_TRUE(eventually([&] { return second->asks() == 1; }));
  }

  std::vector<protocol::item_status> command_statuses(recording_host& host) {
    std::vector<protocol::item_status> out;
    for (auto& done : host.all<protocol::item_completed>())
      if (auto* cmd = std::get_if<protocol::command_execution_item>(&done.item))
        out.push_back(cmd->status);
    return out;
  }

  runtime_config cfg;
  std::string dir, thread;
  std::unique_ptr<runtime> rt;
  std::shared_ptr<recording_host> first, second;
  std::unique_ptr<in_process_client> a, b;
};

TEST_F(approval_clients, a_client_that_joins_is_asked_the_same_approval) {
  std::mutex mtx;  // the hosts are called on the runtime's threads
  std::vector<approval_ask> asked_first, asked_second;
  first->decide = [&](const approval_ask& ask, approval_reply) {
    std::lock_guard<std::mutex> lock{mtx};
    asked_first.push_back(ask);
  };
  second->decide = [&](const approval_ask& ask, approval_reply) {
    std::lock_guard<std::mutex> lock{mtx};
    asked_second.push_back(ask);
  };
  start_and_join();
  std::lock_guard<std::mutex> lock{mtx};
  ASSERT_EQ(asked_first.size(), 1u);
  ASSERT_EQ(asked_second.size(), 1u);
  EXPECT_EQ(asked_second[0].key, asked_first[0].key);
  EXPECT_EQ(asked_second[0].item_id(), asked_first[0].item_id());
  EXPECT_EQ(asked_second[0].digest, asked_first[0].digest);
  EXPECT_FALSE(fs::exists(dir + "/ran"));  // nobody answered yet
}

TEST_F(approval_clients, the_first_answer_wins_and_the_other_copy_is_withdrawn) {
  approval_reply held{in_process_actor{}, 0};
  first->decide = [&](const approval_ask&, approval_reply r) { held = r; };  // answers later
  second->decide
      = [](const approval_ask&, approval_reply r) { r(protocol::approval_decision::accept()); };
  start_and_join();
  ASSERT_TRUE(first->wait_turns(1));
  EXPECT_EQ(lines_in(dir + "/ran"), 1u);
  EXPECT_EQ(command_statuses(*first),
            (std::vector<protocol::item_status>{protocol::item_status::completed}));
  EXPECT_TRUE(eventually([&] { return first->withdrawn() == 1; }));  // its copy was voided
  EXPECT_EQ(second->withdrawn(), 0u);
  held(protocol::approval_decision::decline());  // too late: ignored
  auto counts = a->counts();
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->pending_asks, 0);
  EXPECT_EQ(lines_in(dir + "/ran"), 1u);
}

TEST_F(approval_clients, racing_answers_apply_exactly_one) {
  for (int round = 0; round < 20; ++round) {
    first->decide = [](const approval_ask&, approval_reply r) {
      std::thread([r] { r(protocol::approval_decision::accept()); }).detach();
    };
    second->decide = [](const approval_ask&, approval_reply r) {
      std::thread([r] { r(protocol::approval_decision::decline()); }).detach();
    };
    auto before_asks = first->asks();
    ASSERT_TRUE(a->start_turn(turn_params(thread, "run[escalate]: echo x >> ran")));
    ASSERT_TRUE(eventually([&] { return first->asks() == before_asks + 1; }));
    protocol::thread_resume_params resume;
    resume.thread_id = thread;
    ASSERT_TRUE(b->resume_thread(resume));
    ASSERT_TRUE(first->wait_turns(static_cast<size_t>(round) + 1));
  }
  // Each turn ran its command once (accepted) or never (declined).
  auto statuses = command_statuses(*first);
  ASSERT_EQ(statuses.size(), 20u);
  size_t completed = 0;
  for (auto s : statuses) completed += s == protocol::item_status::completed;
  EXPECT_EQ(lines_in(dir + "/ran"), completed);
}

TEST_F(approval_clients, a_client_that_leaves_withdraws_nothing_while_another_can_answer) {
  first->decide = nullptr;                // never answers, then leaves
  std::shared_ptr<approval_reply> later;  // set on the runtime's thread
  std::atomic<bool> asked{false};
  second->decide = [&](const approval_ask&, approval_reply r) {
    later = std::make_shared<approval_reply>(r);
    asked = true;
  };
  start_and_join();
  a.reset();  // the first client disconnects
  ASSERT_TRUE(eventually([&] { return asked.load(); }));
  (*later)(protocol::approval_decision::accept());
  ASSERT_TRUE(second->wait_turns(1));
  EXPECT_EQ(lines_in(dir + "/ran"), 1u);
  EXPECT_EQ(command_statuses(*second),
            (std::vector<protocol::item_status>{protocol::item_status::completed}));
}

TEST_F(approval_clients, the_last_client_leaving_is_not_an_answer) {
  first->decide = nullptr;
  second->decide = nullptr;
  start_and_join();
  a.reset();
  b.reset();
  // Nobody can decide now, but leaving is not an answer: the approval waits
  // for a client to come (or its deadline). One that resumes is asked.
  auto third = std::make_shared<recording_host>();
  third->decide
      = [](const approval_ask&, approval_reply r) { r(protocol::approval_decision::accept()); };
  in_process_client c{*rt, third};
  protocol::thread_resume_params resume;
  resume.thread_id = thread;
  ASSERT_TRUE(c.resume_thread(resume));
  ASSERT_TRUE(third->wait_turns(1));
  EXPECT_EQ(third->asks(), 1u);
  EXPECT_EQ(lines_in(dir + "/ran"), 1u);
}

}  // namespace
}  // namespace parley
