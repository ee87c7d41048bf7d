#pragma once
// Deterministic actor tests: parley's actors on CAF's test_coordinator (one
// thread, the test's; time moves only when the test advances the clock),
// with typed mocks for the store, the model and the clients. Nothing sleeps:
// a test sends, runs the scheduler until nothing is left to do, and looks.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"

namespace parley::test {

/// What a mock client has seen, in order: the methods of its notifications
/// ("thread/status/changed" carries its status: ":waiting", ":active",
/// ":idle"), "ask" and "withdraw".
struct client_log {
  std::vector<std::string> seen;
  std::vector<notification_ptr> events;
  size_t event_messages = 0;  // messages the events came in (a batch is one)
  std::vector<approval_ask> asks;
  std::vector<uint64_t> withdrawn;
};

/// Answers an ask the mock client holds (the test decides when).
using answer_atom = atom::answer;

/// A client that records everything and answers asks only when told
/// (`answer_atom, key, decision`); an unanswered ask stays open.
client_actor spawn_mock_client(caf::actor_system& sys, std::shared_ptr<client_log> log);

/// Answers an ask `client` (a mock) holds open.
void answer(caf::scoped_actor& self, const client_actor& client, uint64_t key,
            protocol::approval_decision d);

/// What the mock store received, and what it answers with.
struct store_log {
  std::vector<store_record> appended;
  std::map<std::string, stored_thread> threads;  // load answers from here
  bool hold_appends = false;                     // true: appends wait until release_appends()
  bool hold_loads = false;                       // true: loads wait until release_loads()
  size_t loads = 0;                              // loads asked for
  size_t most_loads_held = 0;                    // the most loads held at once
  bool sealed = false;                           // atom::seal arrived
};

/// A store that keeps records in memory; appends can be held to show what
/// waits for durability.
store_actor spawn_mock_store(caf::actor_system& sys, std::shared_ptr<store_log> log);

/// Acknowledges every held append (in order).
void release_appends(caf::scoped_actor& self, const store_actor& store);

/// Acknowledges the first `count` held appends (in order); the rest stay
/// held, so a test can show what waits for one record in particular.
void release_appends(caf::scoped_actor& self, const store_actor& store, uint64_t count);

/// Answers every held load (in order), each from `threads`.
void release_loads(caf::scoped_actor& self, const store_actor& store);

/// A model that answers each step from a queue (then `done`), and keeps the
/// context of every step it was asked for in `asked` (when given): what a
/// turn told its model is what a test checks after a restore. `held` (when
/// given) records each backpressure signal its turns passed on.
model_actor spawn_mock_model(caf::actor_system& sys, std::shared_ptr<std::deque<model_step>> steps,
                             std::shared_ptr<std::vector<model_context>> asked = nullptr,
                             std::shared_ptr<std::vector<bool>> held = nullptr);

model_step say(std::string text);
model_step run(std::string command);
/// A run that asks to leave the sandbox: what on-request asks about.
model_step escalate(std::string command);

/// The fixture: an actor system on the test coordinator, services wired to
/// the mocks, and helpers to run it.
class deterministic {
 public:
  deterministic();
  ~deterministic();

  /// Runs every job until the system is quiet (time does not move).
  void run();
  /// Moves time on by `d` (firing what falls due), then runs.
  void advance(caf::timespan d);

  /// A conversation for a new thread (policy on-request, in /tmp).
  conversation_actor start_conversation(protocol::approval_policy policy
                                        = protocol::approval_policy::on_request());

  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::unique_ptr<caf::scoped_actor> self;
  std::shared_ptr<runtime_config> config;
  std::shared_ptr<store_log> stored;
  std::shared_ptr<std::deque<model_step>> steps;
  std::shared_ptr<std::vector<model_context>> model_asked;  // every context the model got
  std::shared_ptr<std::vector<bool>> model_held;  // every hold (true) and release the model got
  runtime_services svc;
};

}  // namespace parley::test
