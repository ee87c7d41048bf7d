#include "bench/harness/ledger.hpp"

namespace parley::bench {

void ledger::violation(std::string what) {
  if (violations_.size() < 1000) violations_.push_back(std::move(what));
}

void ledger::thread_started(const std::string& thread_id) {
  if (!current_turn_.emplace(thread_id, std::string{}).second)
    violation("thread id reused: " + thread_id);
}

void ledger::turn_started(const std::string& thread_id, const std::string& turn_id) {
  auto i = current_turn_.find(thread_id);
  if (i == current_turn_.end()) {
    violation("turn " + turn_id + " for an unknown thread " + thread_id);
    return;
  }
  i->second = turn_id;
  ++started_turns_;
}

void ledger::event(const std::string& method, const std::string& thread_id,
                   const std::string& turn_id) {
  auto i = current_turn_.find(thread_id);
  if (i == current_turn_.end()) {
    violation(method + " for a thread this client does not own: " + thread_id);
    return;
  }
  if (!turn_id.empty() && turn_id != i->second && completed_.count(turn_id) == 0)
    violation(method + " names turn " + turn_id + " but thread " + thread_id + " runs " + i->second);
}

void ledger::approval_requested(const std::string& request_id, const std::string& thread_id,
                                const std::string& turn_id) {
  if (!requests_.insert(request_id).second) violation("approval request id reused: " + request_id);
  request_thread_[request_id] = thread_id;
  event("requestApproval", thread_id, turn_id);
}

void ledger::approval_resolved(const std::string& request_id, const std::string& thread_id) {
  auto i = request_thread_.find(request_id);
  if (i == request_thread_.end()) {
    violation("serverRequest/resolved for an unknown request " + request_id);
    return;
  }
  if (i->second != thread_id)
    violation("request " + request_id + " resolved for thread " + thread_id + ", asked for " + i->second);
  if (++resolved_[request_id] == 2) violation("approval " + request_id + " resolved twice");
}

void ledger::turn_completed(const std::string& thread_id, const std::string& turn_id) {
  event("turn/completed", thread_id, turn_id);
  if (!completed_.insert(turn_id).second) {
    violation("turn " + turn_id + " completed twice");
    return;
  }
  ++completed_turns_;
}

void ledger::finish() {
  for (auto& r : requests_)
    if (resolved_.count(r) == 0) violation("approval " + r + " never resolved");
  if (completed_turns_ < started_turns_)
    violation(std::to_string(started_turns_ - completed_turns_) + " turn(s) never completed");
}

}  // namespace parley::bench
