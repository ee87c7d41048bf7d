// The conversation, its turns and their approvals on CAF's test coordinator:
// deterministic (one thread, no sleeping; time moves only when the test
// advances it), with mocks for the store, the model and the clients.

#include "actors/threads/conversation.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "actors/approval/rules_book.hpp"
#include "tests/support/deterministic.hpp"

namespace parley {
namespace {

using test::client_log;
using strings = std::vector<std::string>;

class conversation_test : public ::testing::Test, public test::deterministic {
 protected:
  /// Subscribes a new mock client (thread/start's open).
  std::shared_ptr<client_log> open(const conversation_actor& conv) {
    auto log = std::make_shared<client_log>();
    auto client = test::spawn_mock_client(*sys, log);
    clients.push_back(client);
    auto h = (*self)->request(conv, caf::infinite, atom::open::value, client);
    run();
    h.receive([](protocol::thread_session_response&) {},
              [](caf::error& err) { FAIL() << caf::to_string(err); });
    return log;
  }

  /// Starts a turn for the first client; returns its id.
  std::string start_turn(const conversation_actor& conv) {
    protocol::turn_start_params p;
    p.input = {protocol::user_input::make_text("go")};
    std::string id;
    auto h = (*self)->request(conv, caf::infinite, atom::turn_start::value, p, clients.front());
    run();
    h.receive([&](protocol::turn_start_response& r) { id = r.turn_.id; },
              [](caf::error& err) { FAIL() << caf::to_string(err); });
    return id;
  }

  /// A conversation whose turn waits on the client's decision about
  /// `command`; returns the client's log (its one ask is open).
  std::shared_ptr<client_log> pending_approval(const std::string& command) {
    steps->push_back(test::escalate(command));
    pending_conv = start_conversation();
    auto log = open(pending_conv);
    pending_turn = start_turn(pending_conv);
    EXPECT_EQ(log->asks.size(), 1u);
    return log;
  }

  void answer(size_t client, uint64_t key, protocol::approval_decision d) {
    test::answer(*self, clients.at(client), key, std::move(d));
    run();
  }

  /// What a client saw from `from` on (thread/started and the first events
  /// of every turn are the same everywhere).
  static strings tail(const client_log& log, size_t from) {
    return strings(log.seen.begin() + static_cast<std::ptrdiff_t>(from), log.seen.end());
  }

  /// What a client saw after it was asked.
  static strings after_ask(const client_log& log) {
    auto ask = std::find(log.seen.begin(), log.seen.end(), "ask");
    return ask == log.seen.end() ? strings{} : strings(ask + 1, log.seen.end());
  }

  static protocol::turn_status last_turn_status(const client_log& log) {
    for (auto i = log.events.rbegin(); i != log.events.rend(); ++i)
      if (auto* done = std::get_if<protocol::turn_completed>(&(*i)->body))
        return done->turn_.status;
    return protocol::turn_status::in_progress;
  }

  std::vector<client_actor> clients;
  conversation_actor pending_conv;  // pending_approval()'s
  std::string pending_turn;
};

const strings turn_opening
    = {"thread/status/changed:active", "turn/started", "item/started", "item/completed"};

strings with_opening(const strings& rest) {
  auto out = turn_opening;
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

TEST_F(conversation_test, a_turn_that_says_something_in_codex_order) {
  steps->push_back(test::say("hello"));
  auto conv = start_conversation();
  auto log = open(conv);
  start_turn(conv);
  EXPECT_EQ(log->seen,
            (strings{"thread/started", "thread/status/changed:active", "turn/started",
                     "item/started", "item/completed", "item/started", "item/agentMessage/delta",
                     "item/completed", "thread/status/changed:idle", "turn/completed"}));
  EXPECT_EQ(last_turn_status(*log), protocol::turn_status::completed);
}

// Every conversation runs the same behavior (its handlers find their actor
// as it runs): two threads renamed in turn each keep their own name.
TEST_F(conversation_test, conversations_sharing_one_behavior_each_answer_for_themselves) {
  auto first = start_conversation();
  auto second = start_conversation();
  open(first);
  open(second);
  auto rename = [&](const conversation_actor& conv, const std::string& name) {
    protocol::thread_name_set_params p;
    p.name = name;
    return (*self)->request(conv, caf::infinite, atom::rename::value, p);
  };
  auto a = rename(first, "one");
  auto b = rename(second, "two");
  run();  // both in the mailboxes, then run: the two actors' turns interleave
  for (auto* h : {&a, &b})
    h->receive([](atom::ok) {}, [](caf::error& err) { FAIL() << caf::to_string(err); });
  auto name_of = [&](const conversation_actor& conv) {
    std::optional<std::string> name;
    auto h = (*self)->request(conv, caf::infinite, atom::read::value, false);
    run();
    h.receive([&](protocol::thread_read_response& r) { name = r.thread_.name; },
              [](caf::error& err) { FAIL() << caf::to_string(err); });
    return name;
  };
  EXPECT_EQ(name_of(first), std::optional<std::string>{"one"});
  EXPECT_EQ(name_of(second), std::optional<std::string>{"two"});
}

TEST_F(conversation_test, nothing_passes_a_record_the_store_has_not_acknowledged) {
  stored->hold_appends = true;
  steps->push_back(test::say("hello"));
  auto conv = start_conversation();
  auto log = std::make_shared<client_log>();
  auto client = test::spawn_mock_client(*sys, log);
  clients.push_back(client);
  (*self)->send(conv, atom::open::value, client);
  run();
  // thread/started waits for the thread's first record; everything behind it too.
  EXPECT_TRUE(log->seen.empty());
  EXPECT_EQ(stored->appended.size(), 1u);
  stored->hold_appends = false;
  test::release_appends(*self, svc.store);
  run();
  EXPECT_EQ(log->seen, (strings{"thread/started"}));
}

/// A turn's events as it sends them: pieces of a message and an item.
struct turn_events {
  std::string thread = "t-1";
  notification_ptr delta(const std::string& text) const {
    return make_notification(protocol::agent_message_delta{thread, "turn-1", "msg-1", text}, true);
  }
  notification_ptr completed() const {
    protocol::agent_message_item item;
    item.id = "msg-1";
    item.text = "done";
    return make_notification(
        protocol::item_completed{thread, "turn-1", protocol::thread_item{item}, 1}, true);
  }
};

std::vector<const outgoing_event*> identities(const std::vector<notification_ptr>& events,
                                              size_t from) {
  std::vector<const outgoing_event*> out;
  for (size_t i = from; i < events.size(); ++i) out.push_back(events[i].get());
  return out;
}

// A batch from the turn reaches every client as one message, each event
// itself (the same object: the same line) and in the order sent.
TEST_F(conversation_test, a_batch_of_pieces_reaches_each_client_in_one_message_in_order) {
  auto conv = start_conversation();
  auto first = open(conv);
  auto second = open(conv);
  // Each client's own count: only the first, whose open created the
  // thread, was sent thread/started.
  auto first_from = first->events.size();
  auto second_from = second->events.size();
  auto first_messages = first->event_messages;
  auto second_messages = second->event_messages;
  turn_events make;
  notification_batch batch{make.delta("a"), make.delta("b"), make.delta("c")};
  std::vector<const outgoing_event*> sent{batch[0].get(), batch[1].get(), batch[2].get()};
  (*self)->send(conv, atom::event::value, batch);
  run();
  EXPECT_EQ(identities(first->events, first_from), sent);
  EXPECT_EQ(identities(second->events, second_from), sent);
  EXPECT_EQ(first->event_messages, first_messages + 1);
  EXPECT_EQ(second->event_messages, second_messages + 1);
}

// A batch interleaved with events sent alone keeps its place; a completed
// item inside a batch is stored before anyone sees it, and the pieces
// behind it wait for it, as they would have one by one.
TEST_F(conversation_test, a_batch_keeps_its_place_among_single_events_and_the_store) {
  auto conv = start_conversation();
  auto log = open(conv);
  auto from = log->events.size();
  turn_events make;
  auto before = make.delta("x");
  notification_batch batch{make.delta("a"), make.delta("b"), make.completed(), make.delta("c"),
                           make.delta("d")};
  auto after = make.delta("y");
  stored->hold_appends = true;
  (*self)->send(conv, atom::event::value, before);
  (*self)->send(conv, atom::event::value, batch);
  (*self)->send(conv, atom::event::value, after);
  run();
  EXPECT_EQ(identities(log->events, from),
            (std::vector<const outgoing_event*>{before.get(), batch[0].get(), batch[1].get()}));
  stored->hold_appends = false;
  test::release_appends(*self, svc.store);
  run();
  EXPECT_EQ(identities(log->events, from),
            (std::vector<const outgoing_event*>{before.get(), batch[0].get(), batch[1].get(),
                                                batch[2].get(), batch[3].get(), batch[4].get(),
                                                after.get()}));
  EXPECT_EQ(tail(*log, from),
            (strings{"item/agentMessage/delta", "item/agentMessage/delta",
                     "item/agentMessage/delta", "item/completed", "item/agentMessage/delta",
                     "item/agentMessage/delta", "item/agentMessage/delta"}));
}

// Events released together (queued behind a record the store had not yet
// acknowledged) leave as one message per client, in their order (issue 23:
// one hop, not one per event); the next event, alone, is its own message.
TEST_F(conversation_test, events_released_together_reach_each_client_as_one_message_in_order) {
  auto conv = start_conversation();
  auto first = open(conv);
  auto second = open(conv);
  auto first_from = first->events.size();
  auto second_from = second->events.size();
  turn_events make;
  auto held = make.completed();
  auto a = make.delta("a");
  auto b = make.delta("b");
  stored->hold_appends = true;
  (*self)->send(conv, atom::event::value, held);
  (*self)->send(conv, atom::event::value, a);
  (*self)->send(conv, atom::event::value, b);
  run();
  EXPECT_EQ(first->events.size(), first_from);  // all wait for the completed item's record
  auto first_messages = first->event_messages;
  auto second_messages = second->event_messages;
  stored->hold_appends = false;
  test::release_appends(*self, svc.store);
  run();
  std::vector<const outgoing_event*> sent{held.get(), a.get(), b.get()};
  EXPECT_EQ(identities(first->events, first_from), sent);
  EXPECT_EQ(identities(second->events, second_from), sent);
  EXPECT_EQ(first->event_messages, first_messages + 1);
  EXPECT_EQ(second->event_messages, second_messages + 1);
  auto c = make.delta("c");
  (*self)->send(conv, atom::event::value, c);
  run();
  EXPECT_EQ(first->events.back().get(), c.get());
  EXPECT_EQ(first->event_messages, first_messages + 2);
}

// Pieces of a message that one read of the model's stream held reach the
// turn as one message; the turn passes what it makes of them (the item's
// start and each piece, in order, each its own delta) to its conversation
// as one message, and the conversation to each client as one.
TEST_F(conversation_test, pieces_streamed_at_once_reach_the_client_as_one_message_each_its_own) {
  auto streamed = test::say("");
  streamed.deltas = {"Hel", "lo, ", "world"};
  streamed.streamed_item = "msg_1";
  steps->push_back(streamed);
  auto conv = start_conversation();
  auto log = open(conv);
  auto from = log->events.size();
  auto messages = log->event_messages;
  start_turn(conv);
  EXPECT_EQ(tail(*log, from),
            with_opening({"item/started", "item/agentMessage/delta", "item/agentMessage/delta",
                          "item/agentMessage/delta", "item/completed",
                          "thread/status/changed:idle", "turn/completed"}));
  std::vector<std::string> pieces;
  for (auto& n : log->events)
    if (auto* d = std::get_if<protocol::agent_message_delta>(&n->body)) pieces.push_back(d->delta);
  EXPECT_EQ(pieces, (strings{"Hel", "lo, ", "world"}));
  // Each event of the opening and the end at most one message (those the
  // outbox releases together share one); the item's start and its three
  // pieces one: sent one by one they alone would pass this bound.
  EXPECT_LE(log->event_messages - messages, turn_opening.size() + 1 + 3);
}

TEST_F(conversation_test, a_declined_command_asks_after_its_item_and_never_runs) {
  auto log = pending_approval("touch never");
  ASSERT_EQ(log->asks.size(), 1u);
  EXPECT_EQ(tail(*log, 1), with_opening({"thread/status/changed:waiting", "item/started", "ask"}));
  answer(0, log->asks[0].key, protocol::approval_decision::decline());
  EXPECT_EQ(tail(*log, 1),
            with_opening({"thread/status/changed:waiting", "item/started", "ask",
                          "thread/status/changed:active", "item/completed:command:declined",
                          "thread/status/changed:idle", "turn/completed"}));
  EXPECT_EQ(last_turn_status(*log), protocol::turn_status::completed);
}

TEST_F(conversation_test, the_deadline_voids_the_prompt_and_declines_when_the_clock_says_so) {
  auto log = pending_approval("touch never");
  ASSERT_EQ(log->asks.size(), 1u);
  advance(config->approval_timeout - std::chrono::seconds(1));
  EXPECT_TRUE(log->withdrawn.empty());  // not yet
  advance(std::chrono::seconds(1));
  EXPECT_EQ(log->withdrawn, std::vector<uint64_t>{log->asks[0].key});
  EXPECT_EQ(after_ask(*log),
            (strings{"withdraw", "thread/status/changed:active", "item/completed:command:declined",
                     "thread/status/changed:idle", "turn/completed"}));
  // A late answer changes nothing: exactly one outcome.
  answer(0, log->asks[0].key, protocol::approval_decision::accept());
  EXPECT_EQ(log->seen.back(), "turn/completed");
  EXPECT_EQ(svc.telemetry->counts().pending_asks, 0);
}

TEST_F(conversation_test, an_interrupt_settles_the_approval_before_the_item_ends) {
  auto log = pending_approval("touch never");
  ASSERT_EQ(log->asks.size(), 1u);
  auto h = (*self)->request(pending_conv, caf::infinite, atom::interrupt::value, pending_turn);
  run();
  h.receive([](atom::ok) {}, [](caf::error& err) { FAIL() << caf::to_string(err); });
  EXPECT_EQ(after_ask(*log),
            (strings{"withdraw", "thread/status/changed:active", "item/completed:command:declined",
                     "thread/status/changed:idle", "turn/completed"}));
  EXPECT_EQ(last_turn_status(*log), protocol::turn_status::interrupted);
}

TEST_F(conversation_test, a_steer_is_checked_as_codex_checks_it) {
  // (Its success path, through the turn and the model, is tested through the
  // real binary: ctest turn_steer.)
  auto log = pending_approval("touch never");
  ASSERT_EQ(log->asks.size(), 1u);
  auto steer = [&](const std::string& expected, const std::string& text) {
    protocol::turn_steer_params p;
    p.expected_turn_id = expected;
    if (!text.empty()) p.input = {protocol::user_input::make_text(text)};
    auto h = (*self)->request(pending_conv, caf::infinite, atom::steer::value, p, clients.front());
    run();
    std::string out;
    h.receive([&](protocol::turn_steer_response& r) { out = "turn " + r.turn_id; },
              [&](caf::error& err) { out = message_of(err); });
    return out;
  };
  EXPECT_EQ(steer("other", "more"),
            "expected active turn id `other` but found `" + pending_turn + "`");
  EXPECT_EQ(steer(pending_turn, ""), "input must not be empty");
  EXPECT_EQ(after_ask(*log), strings{});  // the approval is untouched
  answer(0, log->asks[0].key, protocol::approval_decision::decline());
  EXPECT_EQ(last_turn_status(*log), protocol::turn_status::completed);
  EXPECT_EQ(steer(pending_turn, "late"), "no active turn to steer");
}

TEST_F(conversation_test, a_turn_being_interrupted_takes_no_more_input) {
  auto log = pending_approval("touch never");
  auto stop = (*self)->request(pending_conv, caf::infinite, atom::interrupt::value, pending_turn);
  protocol::turn_steer_params p;
  p.expected_turn_id = pending_turn;
  p.input = {protocol::user_input::make_text("more")};
  auto h = (*self)->request(pending_conv, caf::infinite, atom::steer::value, p, clients.front());
  run();
  stop.receive([](atom::ok) {}, [](caf::error& err) { FAIL() << caf::to_string(err); });
  h.receive([](protocol::turn_steer_response&) { FAIL() << "steered an interrupted turn"; },
            [](caf::error& err) { EXPECT_EQ(message_of(err), "no active turn to steer"); });
  EXPECT_EQ(last_turn_status(*log), protocol::turn_status::interrupted);
}

TEST_F(conversation_test, a_forbidding_rule_decides_without_asking_or_waiting) {
  auto dir
      = std::filesystem::temp_directory_path() / ("parley-det-rules-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "default.rules") << R"(prefix_rule(pattern=["touch"], decision="forbidden"))";
  svc.rules = std::make_shared<rules::rules_book>(dir.string());
  steps->push_back(test::escalate("touch never"));
  auto conv = start_conversation();
  auto log = open(conv);
  start_turn(conv);
  EXPECT_TRUE(log->asks.empty());
  EXPECT_EQ(tail(*log, 1), with_opening({"item/started", "item/completed:command:declined",
                                         "thread/status/changed:idle", "turn/completed"}));
  std::filesystem::remove_all(dir);
}

TEST_F(conversation_test, with_two_clients_the_first_answer_wins_and_the_other_copy_is_voided) {
  steps->push_back(test::escalate("touch never"));
  auto conv = start_conversation();
  auto first = open(conv);
  auto second = open(conv);
  start_turn(conv);
  ASSERT_EQ(first->asks.size(), 1u);
  ASSERT_EQ(second->asks.size(), 1u);
  EXPECT_EQ(first->asks[0].key, second->asks[0].key);
  answer(1, second->asks[0].key, protocol::approval_decision::decline());
  EXPECT_EQ(first->withdrawn, std::vector<uint64_t>{first->asks[0].key});
  EXPECT_TRUE(second->withdrawn.empty());
  auto refused_before = svc.telemetry->approvals.snapshot().refused_replies;
  answer(0, first->asks[0].key, protocol::approval_decision::accept());  // its copy is void
  EXPECT_EQ(svc.telemetry->approvals.snapshot().refused_replies, refused_before);
  EXPECT_EQ(first->seen.back(), "turn/completed");
}

TEST_F(conversation_test, an_idle_thread_unloads_when_its_timer_fires) {
  auto conv = start_conversation();
  auto log = open(conv);
  auto h = (*self)->request(conv, caf::infinite, atom::unsub::value, clients.front());
  run();
  h.receive([](std::string& reply) { EXPECT_EQ(reply, "unsubscribed"); },
            [](caf::error& err) { FAIL() << caf::to_string(err); });
  (*self)->monitor(conv);
  advance(config->idle_unload - std::chrono::seconds(1));
  auto read = (*self)->request(conv, caf::infinite, atom::read::value, false);
  run();
  read.receive([](protocol::thread_read_response&) {},
               [](caf::error& err) { FAIL() << "unloaded early: " << caf::to_string(err); });
  advance(std::chrono::seconds(1));
  bool down = false;
  (*self)->receive([&](caf::down_msg& dm) { down = dm.source == conv.address(); },
                   caf::after(std::chrono::seconds(0)) >> [] {});
  EXPECT_TRUE(down);
}

// Backpressure (issue 22): a subscriber behind in reading holds the active
// turn's model stream until it has caught up; with two subscribers, until
// both have; one that leaves lets go; a client that is no subscriber holds
// nothing. The mock model records what its turn passed on.
TEST_F(conversation_test, a_subscriber_behind_holds_the_turns_model_until_every_one_caught_up) {
  auto first = pending_approval("touch held");  // the turn runs (it waits on the client)
  auto second = open(pending_conv);
  auto pressure = [&](size_t client, bool on) {
    (*self)->send(pending_conv, atom::pressure::value, clients.at(client), on);
    run();
  };
  pressure(0, true);
  EXPECT_EQ(*model_held, std::vector<bool>{true});
  pressure(0, true);
  pressure(1, true);
  EXPECT_EQ(*model_held, std::vector<bool>{true}) << "held once, however many are behind";
  pressure(0, false);
  EXPECT_EQ(*model_held, std::vector<bool>{true}) << "the second client is still behind";
  pressure(1, false);
  EXPECT_EQ(*model_held, (std::vector<bool>{true, false}));
  pressure(1, true);
  EXPECT_EQ(*model_held, (std::vector<bool>{true, false, true}));
  (*self)->send(pending_conv, atom::gone::value, clients.at(1));
  run();
  EXPECT_EQ(*model_held, (std::vector<bool>{true, false, true, false}))
      << "a client that left holds nothing";
  auto stranger = test::spawn_mock_client(*sys, std::make_shared<test::client_log>());
  (*self)->send(pending_conv, atom::pressure::value, stranger, true);
  run();
  EXPECT_EQ(model_held->size(), 4u) << "a client that is no subscriber holds nothing";
  (void)second;
  answer(0, first->asks.at(0).key, protocol::approval_decision::decline());
  EXPECT_EQ(last_turn_status(*first), protocol::turn_status::completed);
}

TEST_F(conversation_test, a_turn_that_starts_while_a_subscriber_is_behind_starts_held) {
  steps->push_back(test::escalate("touch later"));
  auto conv = start_conversation();
  auto log = open(conv);
  (*self)->send(conv, atom::pressure::value, clients.front(), true);
  run();
  EXPECT_TRUE(model_held->empty()) << "no turn runs: nothing to hold yet";
  start_turn(conv);
  EXPECT_EQ(*model_held, std::vector<bool>{true});
  ASSERT_EQ(log->asks.size(), 1u) << "an approval still reaches a client that is behind";
  answer(0, log->asks[0].key, protocol::approval_decision::decline());
  EXPECT_EQ(last_turn_status(*log), protocol::turn_status::completed);
}

}  // namespace
}  // namespace parley
