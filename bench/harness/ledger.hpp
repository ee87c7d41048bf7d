#pragma once
// The harness's bookkeeping of a run: which thread and turn every id belongs
// to, on which connection, and the checks that make a run valid. A thread
// is owned by the connection that started it; other connections may join it
// (thread/resume) and then receive its events and their own copy of each
// approval, which are not violations. A violation fails the run:
//   - an approval copy resolved more than once on its connection, or never;
//   - an approval's item completed more than once on a connection, or never;
//   - a turn completed more than once on a connection, or never completed;
//   - an event naming a thread its connection neither owns nor joined, or a
//     turn that is not that thread's current turn (ids crossed);
//   - an approval request for a thread/turn that is not this one's.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace parley::bench {

class ledger {
 public:
  /// A thread started on `connection`, which owns it.
  void thread_started(const std::string& thread_id, int connection = 0);
  /// Another connection subscribed to the thread (thread/resume).
  void thread_joined(const std::string& thread_id, int connection);
  /// The turn `connection` now sees running on the thread: the owner's
  /// turn/start reply, or turn/started on a connection that joined.
  void turn_started(const std::string& thread_id, const std::string& turn_id, int connection = 0);
  /// Any event carrying thread/turn ids (turnId may be empty).
  void event(const std::string& method, const std::string& thread_id, const std::string& turn_id,
             int connection = 0);
  /// One copy of an approval, asked on `connection`; request ids are per
  /// connection. `item_id` (empty when the protocol has none) names the
  /// item the approval decides.
  void approval_requested(const std::string& request_id, const std::string& thread_id,
                          const std::string& turn_id, int connection = 0,
                          const std::string& item_id = {});
  void approval_resolved(const std::string& request_id, const std::string& thread_id,
                         int connection = 0);
  /// A command item completed (item/completed), seen on `connection`.
  void item_completed(const std::string& thread_id, const std::string& item_id, int connection = 0);
  void turn_completed(const std::string& thread_id, const std::string& turn_id, int connection = 0);

  /// Adds the checks that only hold at the end of a run.
  void finish();

  const std::vector<std::string>& violations() const { return violations_; }
  /// Approvals asked on the connections that own their threads (one per decision).
  size_t approvals() const { return approvals_; }
  /// Every copy asked, on every connection.
  size_t approval_requests() const { return requested_.size(); }
  /// Turns completed as seen by their threads' owners.
  size_t turns_completed() const { return completed_turns_; }

 private:
  using on_connection = std::pair<int, std::string>;  // (connection, id)

  void violation(std::string what);
  bool owns(const std::string& thread_id, int connection) const;

  std::map<std::string, int> owner_;                 // thread -> connection
  std::map<on_connection, std::string> current_turn_;  // (connection, thread) -> turn
  std::set<on_connection> started_;                  // (owner, turn)
  std::set<std::string> completed_;                  // turn ids, on any connection
  std::set<on_connection> completed_on_;             // (connection, turn)
  std::map<on_connection, std::string> requested_;   // (connection, request) -> thread
  std::map<on_connection, int> resolved_;            // (connection, request) -> times
  std::map<on_connection, int> items_;               // (connection, thread/item) asked -> completions
  size_t approvals_ = 0;
  size_t completed_turns_ = 0;
  std::vector<std::string> violations_;
};

}  // namespace parley::bench
