#pragma once
// The harness's bookkeeping of a run: which thread and turn every id belongs
// to, and the checks that make a run valid. A violation fails the run:
//   - an approval resolved more than once, or never resolved;
//   - a turn completed more than once, or never completed;
//   - an event naming a thread this client does not own, or a turn that is
//     not that thread's current turn (ids crossed between threads);
//   - an approval request for a thread/turn that is not this one's.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace parley::bench {

class ledger {
 public:
  void thread_started(const std::string& thread_id);
  void turn_started(const std::string& thread_id, const std::string& turn_id);
  /// Any event carrying thread/turn ids (turnId may be empty).
  void event(const std::string& method, const std::string& thread_id, const std::string& turn_id);
  void approval_requested(const std::string& request_id, const std::string& thread_id,
                          const std::string& turn_id);
  void approval_resolved(const std::string& request_id, const std::string& thread_id);
  void turn_completed(const std::string& thread_id, const std::string& turn_id);

  /// Adds the checks that only hold at the end of a run.
  void finish();

  const std::vector<std::string>& violations() const { return violations_; }
  size_t approvals() const { return requests_.size(); }
  size_t turns_completed() const { return completed_turns_; }

 private:
  void violation(std::string what);

  std::map<std::string, std::string> current_turn_;  // thread -> turn
  std::set<std::string> completed_;                  // turn ids
  std::map<std::string, std::string> request_thread_;
  std::map<std::string, int> resolved_;
  std::set<std::string> requests_;
  size_t completed_turns_ = 0;
  size_t started_turns_ = 0;
  std::vector<std::string> violations_;
};

}  // namespace parley::bench
