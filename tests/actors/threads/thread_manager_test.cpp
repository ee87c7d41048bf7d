// The thread manager on CAF's test coordinator (deterministic), with mocks
// for the store, the model and the client: requests reach the right thread,
// a failed archive leaves the thread loaded, and shutdown ends every turn
// interrupted and answers once all threads are gone.

#include "actors/threads/thread_manager.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "actors/threads/thread_manager_detail.hpp"
#include "tests/support/deterministic.hpp"

namespace parley {
namespace {

using test::client_log;

class thread_manager_test : public ::testing::Test, public test::deterministic {
 protected:
  void SetUp() override {
    manager = sys->spawn(thread_manager, svc);
    log = std::make_shared<client_log>();
    client = test::spawn_mock_client(*sys, log);
  }

  void TearDown() override {
    (*self)->send_exit(caf::actor_cast<caf::actor>(client), caf::exit_reason::user_shutdown);
    (*self)->send_exit(manager, caf::exit_reason::user_shutdown);
  }

  /// A request to the manager, answered once the system is quiet.
  template <class Result, class... Ts>
  caf::expected<Result> ask(Ts&&... xs) {
    caf::expected<Result> out{caf::error{}};
    auto h = (*self)->request(manager, caf::infinite, std::forward<Ts>(xs)...);
    run();
    h.receive([&](Result& r) { out = std::move(r); }, [&](caf::error& err) { out = err; });
    return out;
  }

  std::string start_thread() { return start_thread_for(client); }

  std::string start_thread_for(const client_actor& who) {
    protocol::thread_start_params p;
    p.cwd = "/tmp";
    auto r = ask<protocol::thread_session_response>(atom::open::value, p, who);
    EXPECT_TRUE(r) << caf::to_string(r.error());
    return r ? r->thread_.id : std::string{};
  }

  protocol::thread_loaded_list_response loaded() {
    return *ask<protocol::thread_loaded_list_response>(atom::loaded::value,
                                                       protocol::thread_loaded_list_params{});
  }

  thread_manager_actor manager;
  std::shared_ptr<client_log> log;
  client_actor client;
};

TEST_F(thread_manager_test, a_started_thread_is_loaded_and_takes_turns) {
  steps->push_back(test::say("hi"));
  auto id = start_thread();
  EXPECT_EQ(loaded().data, std::vector<std::string>{id});
  protocol::turn_start_params p;
  p.thread_id = id;
  p.input = {protocol::user_input::make_text("go")};
  ASSERT_TRUE(ask<protocol::turn_start_response>(atom::turn_start::value, p, client));
  EXPECT_EQ(log->seen.back(), "turn/completed");
}

TEST_F(thread_manager_test, requests_for_unknown_threads_get_codex_errors) {
  protocol::turn_start_params p;
  p.thread_id = "019a0000-0000-7000-8000-000000000000";
  auto r = ask<protocol::turn_start_response>(atom::turn_start::value, p, client);
  ASSERT_FALSE(r);
  EXPECT_EQ(message_of(r.error()), "thread not found: " + p.thread_id);
  p.thread_id = "None";
  r = ask<protocol::turn_start_response>(atom::turn_start::value, p, client);
  EXPECT_EQ(message_of(r.error()), "invalid thread id: None");
  auto unsub = ask<protocol::thread_unsubscribe_response>(
      atom::unsub::value, protocol::thread_id_params{p.thread_id}, client);
  ASSERT_TRUE(unsub);
  EXPECT_EQ(unsub->status, "notLoaded");
}

TEST_F(thread_manager_test, a_failed_archive_leaves_the_thread_loaded) {
  auto id = start_thread();
  auto r
      = ask<protocol::thread>(atom::archive::value, protocol::thread_id_params{id}, true, client);
  ASSERT_FALSE(r);
  EXPECT_EQ(message_of(r.error()), "no rollout found for thread id " + id);
  EXPECT_EQ(loaded().data, std::vector<std::string>{id});
}

TEST_F(thread_manager_test, an_unloaded_thread_leaves_the_others_loaded) {
  // Each conversation's down message finds its own thread (by its actor's
  // id): the one that unloads goes, its neighbours stay.
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(start_thread());
  std::sort(ids.begin(), ids.end());
  auto leaving = ids[2];
  auto unsub = ask<protocol::thread_unsubscribe_response>(
      atom::unsub::value, protocol::thread_id_params{leaving}, client);
  ASSERT_TRUE(unsub);
  EXPECT_EQ(unsub->status, "unsubscribed");
  advance(svc.config->idle_unload + std::chrono::seconds(1));
  run();
  auto left = ids;
  left.erase(left.begin() + 2);
  EXPECT_EQ(loaded().data, left);
  // Another starts; shutdown answers only once every thread's down
  // message found it (one left over would hold the answer back).
  start_thread();
  EXPECT_EQ(loaded().data.size(), 5u);
  EXPECT_TRUE(ask<atom::ok>(atom::shutdown::value));
}

TEST_F(thread_manager_test, a_leaving_client_is_told_to_its_own_threads_alone) {
  // Two clients: `client` starts two threads and joins one of the other's by
  // a turn; `other` starts many. When `client` leaves, only the threads its
  // requests went to hear of it (told to every loaded thread, each leaving
  // connection cost a message per thread), and those it alone was on unload.
  auto other_log = std::make_shared<client_log>();
  auto other = test::spawn_mock_client(*sys, other_log);
  std::vector<std::string> mine{start_thread(), start_thread()};
  std::vector<std::string> others;
  for (int i = 0; i < 40; ++i) others.push_back(start_thread_for(other));
  steps->push_back(test::say("hi"));
  protocol::turn_start_params turn;
  turn.thread_id = others.front();
  turn.input = {protocol::user_input::make_text("go")};
  ASSERT_TRUE(ask<protocol::turn_start_response>(atom::turn_start::value, turn, client));

  (*self)->send(manager, atom::gone::value, client);
  auto jobs = sched->run();
  // The manager, then the three conversations `client` was on (no timers run).
  EXPECT_LT(jobs, others.size()) << "a leaving client was told to every loaded thread";
  advance(svc.config->idle_unload + std::chrono::seconds(1));
  auto still = loaded().data;
  std::sort(others.begin(), others.end());
  EXPECT_EQ(still, others);  // `client`'s own two unloaded; the shared one stays with `other`

  // Its entries went with it: leaving again tells nobody.
  (*self)->send(manager, atom::gone::value, client);
  EXPECT_EQ(sched->run(), 1u);
  // The other leaves too: every thread it was on unloads.
  (*self)->send(manager, atom::gone::value, other);
  run();
  advance(svc.config->idle_unload + std::chrono::seconds(1));
  EXPECT_TRUE(loaded().data.empty());
  (*self)->send_exit(caf::actor_cast<caf::actor>(other), caf::exit_reason::user_shutdown);
}

TEST_F(thread_manager_test, a_client_that_leaves_while_its_resume_loads_is_not_kept) {
  // The client asks to resume a stored thread and leaves while the store
  // loads it: its `gone` finds nothing of it yet. Once loaded, the thread
  // must not keep the departed client (it would never idle out).
  stored_thread stored_one;
  stored_one.meta.id = protocol::new_uuid_v7();
  stored_one.meta.cwd = "/tmp";
  stored->threads[stored_one.meta.id] = stored_one;
  stored->hold_loads = true;
  protocol::thread_resume_params params;
  params.thread_id = stored_one.meta.id;
  auto leaving_log = std::make_shared<client_log>();
  auto leaving = test::spawn_mock_client(*sys, leaving_log);
  (*self)->send(manager, atom::resume::value, params, leaving);
  run();
  ASSERT_EQ(stored->loads, 1u);
  (*self)->send(manager, atom::gone::value, leaving);
  run();
  test::release_loads(*self, svc.store);
  run();
  EXPECT_EQ(loaded().data, std::vector<std::string>{stored_one.meta.id});
  // The connection ends after its `gone`: now the thread is alone.
  (*self)->send_exit(caf::actor_cast<caf::actor>(leaving), caf::exit_reason::user_shutdown);
  run();
  advance(svc.config->idle_unload + std::chrono::seconds(1));
  EXPECT_TRUE(loaded().data.empty()) << "the thread kept a client that had left";

  // A client that ends before the store answers (no `gone` at all).
  auto ended = test::spawn_mock_client(*sys, leaving_log);
  (*self)->send(manager, atom::resume::value, params, ended);
  run();
  (*self)->send_exit(caf::actor_cast<caf::actor>(ended), caf::exit_reason::user_shutdown);
  run();
  test::release_loads(*self, svc.store);
  run();
  advance(svc.config->idle_unload + std::chrono::seconds(1));
  EXPECT_TRUE(loaded().data.empty()) << "the thread kept a client that had ended";
}

TEST_F(thread_manager_test, threads_going_on_after_a_restart_are_loaded_a_few_at_a_time) {
  // After a crash the store may hold many threads whose work goes on: each
  // is loaded, but not all asked for at once (CAF 0.17's table of pending
  // requests makes n at once cost n^2/2 steps).
  constexpr size_t going_on = 300;
  stored->hold_loads = true;
  std::vector<pending_thread> pending;
  for (size_t i = 0; i < going_on; ++i)
    pending.push_back({protocol::new_uuid_v7(), action_record::phase::decided, 0});
  (*self)->send(manager, atom::pending::value, pending);
  run();
  EXPECT_GT(stored->most_loads_held, 0u);
  EXPECT_LT(stored->most_loads_held, going_on) << "every load was asked for at once";
  // Each answer makes room for the next: every one is asked for, once.
  for (size_t round = 0; round < going_on && stored->loads < going_on; ++round) {
    test::release_loads(*self, svc.store);
    run();
  }
  test::release_loads(*self, svc.store);
  run();
  EXPECT_EQ(stored->loads, going_on);
}

TEST_F(thread_manager_test, shutdown_interrupts_turns_and_answers_when_all_are_gone) {
  steps->push_back(test::escalate("touch never"));  // waits on an approval nobody gives
  auto id = start_thread();
  protocol::turn_start_params p;
  p.thread_id = id;
  p.input = {protocol::user_input::make_text("go")};
  ASSERT_TRUE(ask<protocol::turn_start_response>(atom::turn_start::value, p, client));
  ASSERT_EQ(log->asks.size(), 1u);
  ASSERT_TRUE(ask<atom::ok>(atom::shutdown::value));
  EXPECT_EQ(log->withdrawn.size(), 1u);
  bool interrupted = false;
  for (auto& n : log->events)
    if (auto* done = std::get_if<protocol::turn_completed>(&n->body))
      interrupted = done->turn_.status == protocol::turn_status::interrupted;
  EXPECT_TRUE(interrupted);
  EXPECT_EQ(log->seen.back(), "thread/closed");
}

TEST_F(thread_manager_test, shutdown_kills_a_thread_that_cannot_stop_in_time) {
  // Its completed items wait on a store that never acknowledges: it cannot
  // close, so shutdown waits its timeout for it, then kills it and answers.
  steps->push_back(test::say("hi"));
  auto id = start_thread();
  stored->hold_appends = true;
  protocol::turn_start_params p;
  p.thread_id = id;
  p.input = {protocol::user_input::make_text("go")};
  (*self)->send(manager, atom::turn_start::value, p, client);  // its answer waits on the store
  run();
  auto h = (*self)->request(manager, caf::infinite, atom::shutdown::value);
  run();
  EXPECT_EQ(loaded().data, std::vector<std::string>{id});  // still waited for
  advance(thread_manager_detail::shutdown_timeout + std::chrono::seconds(1));
  bool answered = false;
  h.receive([&](atom::ok) { answered = true; }, [](caf::error&) {});
  EXPECT_TRUE(answered);
}

}  // namespace
}  // namespace parley
