#pragma once
// A restart, deterministically: a conversation loaded again gets its turn's
// last stored action (atom::restore, as the thread manager sends it after
// reading the store) and goes on from it, on CAF's test coordinator. The
// helpers build the action records a store would hold, subscribe clients as
// thread/resume does, and read back what the store was asked to append.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "actors/approval/action_digest.hpp"
#include "actors/threads/conversation.hpp"
#include "protocol/ids.hpp"
#include "tests/support/deterministic.hpp"

namespace parley::test {

class restored_turns : public deterministic {
 protected:
  /// Tests stop where the store holds an action's start (a command would
  /// spawn a real process once it is acknowledged), so a turn may still
  /// wait on it at the end: every thread is unloaded first (its turn ends
  /// interrupted), then the store acknowledges everything, so no actor is
  /// left waiting when the actor system shuts down.
  ~restored_turns() {
    for (auto& conv : conversations) (*self)->send(conv, atom::shutdown::value);
    run();
    stored->hold_appends = false;
    release_appends(*self, svc.store);
    run();
  }

  /// A conversation for a thread loaded again (in /tmp, on-request).
  conversation_actor start_conversation() {
    conversations.push_back(deterministic::start_conversation());
    return conversations.back();
  }

  /// A command's action as the store keeps it when the server stopped at
  /// `at` (an asked one waits until `deadline_ms`).
  action_record stored_command(action_record::phase at, const std::string& command,
                               int64_t deadline_ms = 0) {
    action_record a;
    a.at = at;
    a.turn_id = protocol::new_uuid_v7();
    a.item_id = "call_before_restart";
    a.command = command;
    a.cwd = "/tmp";
    a.digest = command_digest(command, a.cwd);
    a.item_started_ms = protocol::unix_ms() - 60'000;
    a.step = 0;
    a.thread_cwd = "/tmp";
    a.policy = protocol::approval_policy::on_request();
    a.writable_roots = {"/tmp"};
    a.deadline_ms = deadline_ms;
    return a;
  }

  /// The same action, decided before the server stopped.
  static action_record decided(action_record a, protocol::approval_decision d) {
    a.at = action_record::phase::decided;
    a.outcome = to_string(approval_outcome::kind::decided);
    a.decision = d;
    a.stage = "client";
    a.decided_by = "connection#1";
    return a;
  }

  /// Loads `conv`'s turn again from `action`, as the thread manager does
  /// right after it spawned the conversation.
  void restore(const conversation_actor& conv, const action_record& action) {
    resumed_turn r;
    r.turn_id = action.turn_id;
    r.started_at = protocol::unix_ms() / 1000 - 60;
    r.user_text = "go";
    r.action = action;
    (*self)->send(conv, atom::restore::value, std::move(r));
    run();
  }

  /// A new client subscribes as thread/start does (atom::open).
  std::shared_ptr<client_log> open(const conversation_actor& conv) {
    auto log = std::make_shared<client_log>();
    auto client = spawn_mock_client(*sys, log);
    clients.push_back(client);
    auto h = (*self)->request(conv, caf::infinite, atom::open::value, client);
    run();
    h.receive([](protocol::thread_session_response&) {},
              [](caf::error& err) { FAIL() << caf::to_string(err); });
    return log;
  }

  /// The first client starts a turn; returns its id.
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

  /// A new client resumes the thread (thread/resume): it is asked what
  /// waits, after its reply.
  std::shared_ptr<client_log> resume(const conversation_actor& conv) {
    auto log = std::make_shared<client_log>();
    auto client = spawn_mock_client(*sys, log);
    clients.push_back(client);
    protocol::thread_resume_params p;
    p.exclude_turns = true;  // the history is the store's business, not these tests'
    auto h = (*self)->request(conv, caf::infinite, atom::resume::value, client, p);
    run();
    h.receive([](protocol::thread_session_response&) {},
              [](caf::error& err) { FAIL() << caf::to_string(err); });
    return log;
  }

  /// Client `i` (in the order they resumed) answers its ask `key`; nothing
  /// runs until the test says so.
  void send_answer(size_t i, uint64_t key, protocol::approval_decision d) {
    answer(*self, clients.at(i), key, std::move(d));
  }

  /// Every action record the store was asked to append, in order.
  std::vector<action_record> actions() const {
    std::vector<action_record> out;
    for (const auto& r : stored->appended)
      if (auto* a = std::get_if<action_record>(&r)) out.push_back(*a);
    return out;
  }

  std::vector<action_record> actions_at(action_record::phase at) const {
    auto all = actions();
    std::vector<action_record> out;
    std::copy_if(all.begin(), all.end(), std::back_inserter(out),
                 [at](const action_record& a) { return a.at == at; });
    return out;
  }

  /// Where the first record of `at` for `item` stands among all appended
  /// records (their order is the store's order); -1 if none.
  std::ptrdiff_t position_of(action_record::phase at, const std::string& item) const {
    for (size_t i = 0; i < stored->appended.size(); ++i)
      if (auto* a = std::get_if<action_record>(&stored->appended[i]))
        if (a->at == at && a->item_id == item) return static_cast<std::ptrdiff_t>(i);
    return -1;
  }

  /// The command item as the store was asked to keep it when it completed.
  std::vector<protocol::command_execution_item> stored_commands() const {
    std::vector<protocol::command_execution_item> out;
    for (const auto& r : stored->appended)
      if (auto* i = std::get_if<item_record>(&r))
        if (auto* cmd = std::get_if<protocol::command_execution_item>(&i->item))
          out.push_back(*cmd);
    return out;
  }

  /// How the last turn ended, as the store was asked to keep it.
  std::optional<protocol::turn_status> stored_turn_status() const {
    std::optional<protocol::turn_status> out;
    for (const auto& r : stored->appended)
      if (auto* t = std::get_if<turn_completed_record>(&r)) out = t->turn.status;
    return out;
  }

  std::vector<client_actor> clients;
  std::vector<conversation_actor> conversations;
};

}  // namespace parley::test
