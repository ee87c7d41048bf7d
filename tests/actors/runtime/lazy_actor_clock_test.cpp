// parley's actor clock in a real actor system (the scheduler parley runs):
// every kind of entry delivers what CAF's own clock delivers, an entry due
// sooner wakes the sleeping clock thread and a later one does not, an ending
// actor's entries go with it, and shutdown drops what is still pending.
//
// The clock thread here sleeps up to an hour unless woken: an entry that
// arrives within the tests' 10 s bounds was shipped because its arrival woke
// the thread, not because the thread happened to look.

#include "actors/runtime/lazy_actor_clock.hpp"
#include "actors/runtime/lazy_clock_scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace parley {
namespace {
namespace lazy_clock_test {

using namespace std::chrono_literals;
using clock_type = caf::actor_clock::clock_type;

constexpr auto patience = 10s;  // a bound for what must happen, never a figure

/// An actor system on parley's scheduler whose clock thread sleeps an hour
/// unless an entry wakes it.
struct clocked_system {
  explicit clocked_system(caf::actor_clock::duration_type longest_sleep = 1h) {
    use_lazy_clock_scheduler(cfg, 2, longest_sleep);
    sys = std::make_unique<caf::actor_system>(cfg);
    clock = lazy_clock_of(*sys);
  }
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  lazy_actor_clock* clock = nullptr;
};

/// Takes requests and never answers them (a promise dropped in CAF 0.17
/// sends nothing).
// (The unused argument: CAF 0.17 spawns an argument-less function through a
// null shared_ptr<std::tuple<>>, which UBSan reports.)
caf::behavior silent_sink(caf::event_based_actor* self, int /*unused*/) {
  return {
      [self](int32_t) -> caf::response_promise { return self->make_response_promise(); },
  };
}

/// Sends `count` requests with `timeout` to `sink`, reports each outcome to
/// `probe` (the error, or "answered"), tells it "sent" once all are out and
/// ends after the last outcome.
caf::behavior requester(caf::event_based_actor* self, caf::actor sink, caf::actor probe,
                        int count, caf::actor_clock::duration_type timeout) {
  auto left = std::make_shared<int>(count);
  auto settle = [self, left] {
    if (--*left == 0) self->quit();
  };
  for (int32_t i = 0; i < count; ++i)
    self->request(sink, timeout, i)
        .then(
            [self, probe, settle](int32_t) {
              self->send(probe, std::string{"answered"});
              settle();
            },
            [self, probe, settle](caf::error& err) {
              self->send(probe, err);
              settle();
            });
  self->send(probe, std::string{"sent"});
  return {
      [](int32_t) {},
  };
}

bool eventually(const std::function<bool()>& condition) {
  auto until = clock_type::now() + patience;
  while (!condition()) {
    if (clock_type::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

void expect_text(caf::scoped_actor& self, const std::string& want) {
  std::string got = "(nothing)";
  self->receive([&](const std::string& text) { got = text; },
                caf::after(patience) >> [] {});
  EXPECT_EQ(got, want);
}

TEST(LazyActorClock, is_the_clock_of_parleys_scheduler) {
  clocked_system s;
  ASSERT_NE(s.clock, nullptr);
  caf::actor_system_config plain;
  caf::actor_system other{plain};
  EXPECT_EQ(lazy_clock_of(other), nullptr);  // the tests' own systems keep CAF's clock
}

TEST(LazyActorClock, a_request_nobody_answers_ends_in_request_timeout_not_before_its_time) {
  clocked_system s;
  caf::scoped_actor self{*s.sys};
  auto sink = s.sys->spawn(silent_sink, 0);
  auto started = clock_type::now();
  auto asking =
      s.sys->spawn(requester, sink, caf::actor{self}, 1, caf::actor_clock::duration_type{50ms});
  expect_text(self, "sent");
  caf::error got;
  self->receive([&](caf::error& err) { got = std::move(err); }, caf::after(patience) >> [] {});
  EXPECT_EQ(got, caf::sec::request_timeout) << s.sys->render(got);
  EXPECT_GE(clock_type::now() - started, 50ms);
  EXPECT_TRUE(eventually([&] { return s.clock->pending() == 0; }));
  self->send_exit(asking, caf::exit_reason::kill);  // ended already unless this failed
  self->send_exit(sink, caf::exit_reason::kill);
}

TEST(LazyActorClock, a_delayed_send_arrives_as_sent_not_before_its_time) {
  clocked_system s;
  caf::scoped_actor self{*s.sys};
  auto started = clock_type::now();
  self->delayed_send(self, 50ms, std::string{"later"});
  EXPECT_EQ(s.clock->pending(), 1u);
  std::string got;
  caf::strong_actor_ptr sender;
  self->receive(
      [&](const std::string& text) {
        got = text;
        sender = self->current_sender();
      },
      caf::after(patience) >> [] {});
  EXPECT_EQ(got, "later");
  EXPECT_EQ(sender, self->ctrl());
  EXPECT_GE(clock_type::now() - started, 50ms);
  EXPECT_EQ(s.clock->pending(), 0u);
}

TEST(LazyActorClock, a_delayed_group_message_reaches_every_member_with_its_sender) {
  clocked_system s;
  caf::scoped_actor member{*s.sys};
  caf::scoped_actor other_member{*s.sys};
  caf::scoped_actor sender{*s.sys};
  auto group = s.sys->groups().get_local("lazy-clock-test");
  member->join(group);
  other_member->join(group);
  s.sys->clock().schedule_message(clock_type::now() + 30ms, group, sender->ctrl(),
                                  caf::make_message(std::string{"to the group"}));
  for (auto* who : {&member, &other_member}) {
    std::string got;
    caf::strong_actor_ptr from;
    (*who)->receive(
        [&](const std::string& text) {
          got = text;
          from = (*who)->current_sender();
        },
        caf::after(patience) >> [] {});
    EXPECT_EQ(got, "to the group");
    EXPECT_EQ(from, sender->ctrl());
  }
}

TEST(LazyActorClock, an_ordinary_timeout_replaces_its_type_and_multi_timeouts_add_up) {
  clocked_system s;
  caf::scoped_actor self{*s.sys};
  auto* me = self.ptr();
  auto now = clock_type::now();
  s.clock->set_ordinary_timeout(now + 1h, me, caf::atom("probe"), 1);
  s.clock->set_ordinary_timeout(now + 30ms, me, caf::atom("probe"), 2);  // replaces id 1
  EXPECT_EQ(s.clock->pending(), 1u);
  s.clock->set_multi_timeout(now + 40ms, me, caf::atom("multi"), 3);
  s.clock->set_multi_timeout(now + 50ms, me, caf::atom("multi"), 4);
  EXPECT_EQ(s.clock->pending(), 3u);
  std::vector<std::pair<std::string, uint64_t>> got;
  for (int i = 0; i < 3; ++i)
    self->receive(
        [&](const caf::timeout_msg& x) {
          got.emplace_back(caf::to_string(x.type), x.timeout_id);
          EXPECT_EQ(self->current_sender(), self->ctrl());  // CAF's: from the actor itself
        },
        caf::after(patience) >> [] {});
  std::vector<std::pair<std::string, uint64_t>> want{{"probe", 2}, {"multi", 3}, {"multi", 4}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(s.clock->pending(), 0u);
}

TEST(LazyActorClock, cancelling_removes_exactly_the_entry_named) {
  clocked_system s;
  caf::scoped_actor self{*s.sys};
  auto* me = self.ptr();
  auto later = clock_type::now() + 1h;
  auto first = caf::make_message_id(1).response_id();
  auto second = caf::make_message_id(2).response_id();
  s.clock->set_request_timeout(later, me, first);
  s.clock->set_request_timeout(later, me, second);
  s.clock->set_ordinary_timeout(later, me, caf::atom("a"), 1);
  s.clock->set_ordinary_timeout(later, me, caf::atom("b"), 1);
  self->delayed_send(self, 1h, std::string{"not cancellable"});
  EXPECT_EQ(s.clock->pending(), 5u);
  s.clock->cancel_request_timeout(me, first);
  s.clock->cancel_ordinary_timeout(me, caf::atom("a"));
  EXPECT_EQ(s.clock->pending(), 3u);
  s.clock->cancel_request_timeout(me, first);  // gone already: nothing else goes
  EXPECT_EQ(s.clock->pending(), 3u);
  s.clock->cancel_timeouts(me);  // the actor's timeouts, not messages sent to it
  EXPECT_EQ(s.clock->pending(), 1u);
  s.clock->cancel_all();
  EXPECT_EQ(s.clock->pending(), 0u);
}

TEST(LazyActorClock, an_earlier_entry_wakes_the_sleeping_clock_and_a_later_one_does_not) {
  clocked_system s;
  caf::scoped_actor self{*s.sys};
  auto* me = self.ptr();
  auto base = clock_type::now();
  s.clock->set_ordinary_timeout(base + 2h, me, caf::atom("far"), 1);
  ASSERT_TRUE(eventually([&] { return s.clock->sleeping(); }));
  auto woken = s.clock->wake_ups();
  for (uint64_t i = 1; i <= 1000; ++i)
    s.clock->set_request_timeout(base + 3h, me, caf::make_message_id(i).response_id());
  s.clock->cancel_ordinary_timeout(me, caf::atom("far"));
  EXPECT_EQ(s.clock->wake_ups(), woken);  // nothing due sooner: it sleeps on
  EXPECT_TRUE(s.clock->sleeping());
  self->delayed_send(self, 20ms, std::string{"soon"});
  EXPECT_EQ(s.clock->wake_ups(), woken + 1);
  expect_text(self, "soon");
  EXPECT_EQ(s.clock->pending(), 1000u);
  s.clock->cancel_timeouts(me);
  EXPECT_EQ(s.clock->pending(), 0u);
}

TEST(LazyActorClock, an_ending_actor_takes_its_entries_and_its_memory_with_it) {
  clocked_system s;
  caf::scoped_actor self{*s.sys};
  auto sink = s.sys->spawn(silent_sink, 0);
  auto asking = s.sys->spawn(requester, sink, caf::actor{self}, 100,
                             caf::actor_clock::duration_type{1h});
  expect_text(self, "sent");
  EXPECT_EQ(s.clock->pending(), 100u);
  caf::weak_actor_ptr weak = caf::actor_cast<caf::weak_actor_ptr>(asking);
  self->monitor(asking);
  self->send_exit(asking, caf::exit_reason::kill);
  asking = nullptr;
  bool down = false;
  self->receive([&](caf::down_msg&) { down = true; }, caf::after(patience) >> [] {});
  EXPECT_TRUE(down);
  EXPECT_TRUE(eventually([&] { return s.clock->pending() == 0; }));
  // No clock entry keeps it: the last reference went with its end.
  EXPECT_TRUE(eventually([&] { return weak.lock() == nullptr; }));
  self->send_exit(sink, caf::exit_reason::kill);
}

TEST(LazyActorClock, shutdown_with_ten_thousand_pending_entries_releases_them_all) {
  caf::weak_actor_ptr sink_left;
  {
    clocked_system s;
    caf::scoped_actor self{*s.sys};
    auto sink = s.sys->spawn(silent_sink, 0);
    sink_left = caf::actor_cast<caf::weak_actor_ptr>(sink);
    auto asking = s.sys->spawn(requester, sink, caf::actor{self}, 5000,
                               caf::actor_clock::duration_type{1h});
    expect_text(self, "sent");
    for (int32_t i = 0; i < 10000; ++i) caf::delayed_anon_send(sink, 1h, i);
    EXPECT_EQ(s.clock->pending(), 15000u);
    // Both end before the system stops (it waits for its actors): the
    // requester's timeouts go with it, the delayed messages to the sink stay
    // until the clock stops.
    caf::anon_send_exit(asking, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(sink, caf::exit_reason::kill);
    EXPECT_TRUE(eventually([&] { return s.clock->pending() == 10000u; }));
  }
  // The delayed messages held the sink; the clock let go of them at its stop.
  EXPECT_EQ(sink_left.lock(), nullptr);
}

TEST(LazyActorClock, requests_from_many_actors_at_once_all_time_out) {
  clocked_system s;
  caf::scoped_actor self{*s.sys};
  auto sink = s.sys->spawn(silent_sink, 0);
  constexpr int actors = 8;
  constexpr int each = 200;
  std::vector<caf::actor> asking;
  for (int a = 0; a < actors; ++a)
    asking.push_back(
        s.sys->spawn(requester, sink, caf::actor{self}, each,
                     caf::actor_clock::duration_type{std::chrono::milliseconds(1 + a * 3)}));
  int sent = 0;
  int timed_out = 0;
  int other = 0;
  bool waited_in_vain = false;
  for (int i = 0; i < actors * (each + 1) && !waited_in_vain; ++i)
    self->receive([&](const std::string& text) { text == "sent" ? ++sent : ++other; },
                  [&](caf::error& err) { err == caf::sec::request_timeout ? ++timed_out : ++other; },
                  caf::after(patience) >> [&] { waited_in_vain = true; });
  EXPECT_FALSE(waited_in_vain);
  EXPECT_EQ(sent, actors);
  EXPECT_EQ(timed_out, actors * each);
  EXPECT_EQ(other, 0);
  for (auto& a : asking) self->send_exit(a, caf::exit_reason::kill);  // ended unless this failed
  self->send_exit(sink, caf::exit_reason::kill);
}

}  // namespace lazy_clock_test
}  // namespace
}  // namespace parley
