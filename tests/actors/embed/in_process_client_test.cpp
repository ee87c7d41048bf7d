// A host embeds the runtime and drives conversations through typed messages,
// answering approvals from its own code. Real subprocesses, no JSON, no pipes.

#include "actors/embed/in_process_client.hpp"

#include "tests/support/in_process_host.hpp"

#include <condition_variable>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <thread>

namespace parley {
namespace {

using test::recording_host;
using test::temp_dir;
using test::turn_params;

using namespace std::chrono_literals;
namespace fs = std::filesystem;

runtime_counts settled_counts(in_process_client& client) {
  runtime_counts c;
  for (int i = 0; i < 100; ++i) {
    c = *client.counts();
    if (c.turns == 0 && c.approvals == 0 && c.execs == 0 && c.pending_asks == 0
        && c.pending_requests == 0 && c.processes == 0)
      break;
    std::this_thread::sleep_for(20ms);
  }
  return c;
}

TEST(in_process_client, host_code_answers_approvals) {
  auto dir = temp_dir("answers");
  runtime rt;
  auto host = std::make_shared<recording_host>();
  // Accept `touch yes`, decline everything else.
  host->decide = [](const approval_ask& ask, approval_reply reply) {
    reply(ask.command.command == "/bin/sh -c 'touch yes'" ? protocol::approval_decision::accept()
                                                          : protocol::approval_decision::decline());
    reply(protocol::approval_decision::accept());  // a second answer has no effect
  };
  {
    in_process_client client{rt, host};
    protocol::thread_start_params sp;
    sp.cwd = dir;
    auto started = client.start_thread(sp);
    ASSERT_TRUE(started) << to_string(started.error());
    auto thread = started->thread_.id;
    auto turn = client.start_turn(turn_params(thread, "run[escalate]: touch yes\nrun[escalate]: touch no\nsay: done"));
    ASSERT_TRUE(turn);
    ASSERT_TRUE(host->wait_turns(1));
    EXPECT_TRUE(fs::exists(dir + "/yes"));
    EXPECT_FALSE(fs::exists(dir + "/no"));
    EXPECT_EQ(host->asks(), 2u);
    std::vector<protocol::item_status> statuses;
    for (auto& c : host->all<protocol::item_completed>())
      if (auto* cmd = std::get_if<protocol::command_execution_item>(&c.item))
        statuses.push_back(cmd->status);
    EXPECT_EQ(statuses, (std::vector<protocol::item_status>{protocol::item_status::completed,
                                                            protocol::item_status::declined}));
    auto read = client.read_thread({thread, true});
    ASSERT_TRUE(read);
    ASSERT_EQ(read->thread_.turns.size(), 1u);
    EXPECT_EQ(read->thread_.turns[0].items.size(), 4u);  // user, 2 commands, message
    auto counts = settled_counts(client);
    EXPECT_EQ(counts.turns, 0);
    EXPECT_EQ(counts.approvals, 0);
    EXPECT_EQ(counts.pending_asks, 0);
    EXPECT_EQ(counts.pending_requests, 0);
  }
}

TEST(in_process_client, unanswered_approvals_time_out_closed) {
  auto dir = temp_dir("timeout");
  runtime_config cfg;
  cfg.approval_timeout = 200ms;
  runtime rt{cfg};
  auto host = std::make_shared<recording_host>();  // never answers
  in_process_client client{rt, host};
  protocol::thread_start_params sp;
  sp.cwd = dir;
  auto thread = client.start_thread(sp)->thread_.id;
  ASSERT_TRUE(client.start_turn(turn_params(thread, "run[escalate]: touch late")));
  ASSERT_TRUE(host->wait_turns(1));
  EXPECT_EQ(host->withdrawn(), 1u);
  EXPECT_FALSE(fs::exists(dir + "/late"));
  auto completed = host->all<protocol::item_completed>();
  ASSERT_FALSE(completed.empty());
  auto* cmd = std::get_if<protocol::command_execution_item>(&completed.back().item);
  ASSERT_NE(cmd, nullptr);
  EXPECT_EQ(cmd->status, protocol::item_status::declined);
}

TEST(in_process_client, interrupt_resolves_a_pending_approval) {
  auto dir = temp_dir("interrupt");
  runtime rt;
  auto host = std::make_shared<recording_host>();
  std::mutex mtx;
  std::optional<approval_reply> held;
  host->decide = [&](const approval_ask&, approval_reply reply) {
    std::lock_guard<std::mutex> lock{mtx};
    held = reply;  // answer later
  };
  in_process_client client{rt, host};
  protocol::thread_start_params sp;
  sp.cwd = dir;
  auto thread = client.start_thread(sp)->thread_.id;
  auto turn = client.start_turn(turn_params(thread, "run[escalate]: touch never"))->turn_.id;
  for (int i = 0; i < 200 && host->asks() == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(host->asks(), 1u);
  EXPECT_FALSE(client.interrupt_turn({thread, turn}));
  ASSERT_TRUE(host->wait_turns(1));
  {
    std::lock_guard<std::mutex> lock{mtx};
    (*held)(protocol::approval_decision::accept());  // late: ignored
  }
  auto done = host->all<protocol::turn_completed>();
  EXPECT_EQ(done[0].turn_.status, protocol::turn_status::interrupted);
  EXPECT_EQ(host->withdrawn(), 1u);
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(fs::exists(dir + "/never"));
  auto err = client.interrupt_turn({thread, turn});
  EXPECT_EQ(message_of(err), "no active turn to interrupt");
}

TEST(in_process_client, disconnecting_is_not_an_answer) {
  auto dir = temp_dir("disconnect");
  runtime rt;
  auto host = std::make_shared<recording_host>();
  std::string thread;
  {
    in_process_client client{rt, host};
    protocol::thread_start_params sp;
    sp.cwd = dir;
    thread = client.start_thread(sp)->thread_.id;
    ASSERT_TRUE(client.start_turn(turn_params(thread, "run[escalate]: touch never")));
    for (int i = 0; i < 200 && host->asks() == 0; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_EQ(host->asks(), 1u);
  }  // the client goes away with the approval pending
  // Leaving decides nothing: the approval still waits, and a client that
  // resumes the thread is asked it (here it declines: nothing runs).
  auto next = std::make_shared<recording_host>();
  next->decide
      = [](const approval_ask&, approval_reply r) { r(protocol::approval_decision::decline()); };
  in_process_client observer{rt, next};
  auto read = observer.read_thread({thread, true});
  ASSERT_TRUE(read);
  ASSERT_EQ(read->thread_.turns.size(), 1u);
  EXPECT_EQ(read->thread_.turns[0].status, protocol::turn_status::in_progress);
  protocol::thread_resume_params resume;
  resume.thread_id = thread;
  ASSERT_TRUE(observer.resume_thread(resume));
  ASSERT_TRUE(next->wait_turns(1));
  EXPECT_EQ(next->asks(), 1u);
  EXPECT_FALSE(fs::exists(dir + "/never"));
}

}  // namespace
}  // namespace parley
