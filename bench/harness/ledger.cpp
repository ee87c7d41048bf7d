#include "bench/harness/ledger.hpp"

namespace parley::bench {

namespace {

/// " on connection N" except for the first, so one-session runs read as before.
std::string where(int connection) {
  return connection == 0 ? std::string{} : " on connection " + std::to_string(connection);
}

}  // namespace

void ledger::violation(std::string what) {
  if (violations_.size() < 1000) violations_.push_back(std::move(what));
}

bool ledger::owns(const std::string& thread_id, int connection) const {
  auto i = owner_.find(thread_id);
  return i != owner_.end() && i->second == connection;
}

void ledger::thread_started(const std::string& thread_id, int connection) {
  if (!owner_.emplace(thread_id, connection).second) {
    violation("thread id reused: " + thread_id);
    return;
  }
  current_turn_[{connection, thread_id}];
}

void ledger::thread_joined(const std::string& thread_id, int connection) {
  if (owner_.count(thread_id) == 0) {
    violation("joined an unknown thread " + thread_id + where(connection));
    return;
  }
  current_turn_[{connection, thread_id}];
}

void ledger::turn_started(const std::string& thread_id, const std::string& turn_id, int connection) {
  auto i = current_turn_.find({connection, thread_id});
  if (i == current_turn_.end()) {
    violation("turn " + turn_id + " for an unknown thread " + thread_id + where(connection));
    return;
  }
  i->second = turn_id;
  if (owns(thread_id, connection)) started_.insert({connection, turn_id});
}

void ledger::event(const std::string& method, const std::string& thread_id,
                   const std::string& turn_id, int connection) {
  auto i = current_turn_.find({connection, thread_id});
  if (i == current_turn_.end()) {
    violation(method + " for a thread this client does not own: " + thread_id + where(connection));
    return;
  }
  if (!turn_id.empty() && turn_id != i->second && completed_.count(turn_id) == 0)
    violation(method + " names turn " + turn_id + " but thread " + thread_id + " runs " + i->second
              + where(connection));
}

void ledger::approval_requested(const std::string& request_id, const std::string& thread_id,
                                const std::string& turn_id, int connection,
                                const std::string& item_id) {
  if (!requested_.emplace(on_connection{connection, request_id}, thread_id).second)
    violation("approval request id reused: " + request_id + where(connection));
  if (owns(thread_id, connection)) ++approvals_;
  if (!item_id.empty()) items_.emplace(on_connection{connection, thread_id + "/" + item_id}, 0);
  event("requestApproval", thread_id, turn_id, connection);
}

void ledger::approval_resolved(const std::string& request_id, const std::string& thread_id,
                               int connection) {
  auto i = requested_.find({connection, request_id});
  if (i == requested_.end()) {
    violation("serverRequest/resolved for an unknown request " + request_id + where(connection));
    return;
  }
  if (i->second != thread_id)
    violation("request " + request_id + " resolved for thread " + thread_id + ", asked for "
              + i->second + where(connection));
  if (++resolved_[{connection, request_id}] == 2)
    violation("approval " + request_id + " resolved twice" + where(connection));
}

void ledger::item_completed(const std::string& thread_id, const std::string& item_id,
                            int connection) {
  auto i = items_.find({connection, thread_id + "/" + item_id});
  if (i == items_.end()) return;  // a command that asked nothing
  if (++i->second == 2)
    violation("item " + item_id + " of thread " + thread_id + " completed twice" + where(connection));
}

void ledger::turn_completed(const std::string& thread_id, const std::string& turn_id, int connection) {
  event("turn/completed", thread_id, turn_id, connection);
  completed_.insert(turn_id);
  if (!completed_on_.insert({connection, turn_id}).second) {
    violation("turn " + turn_id + " completed twice" + where(connection));
    return;
  }
  if (owns(thread_id, connection)) ++completed_turns_;
}

void ledger::finish() {
  for (auto& [key, thread] : requested_)
    if (resolved_.count(key) == 0) violation("approval " + key.second + " never resolved" + where(key.first));
  for (auto& [key, times] : items_)
    if (times == 0) violation("item " + key.second + " asked for approval never completed" + where(key.first));
  size_t completed = 0;
  for (auto& turn : started_) completed += completed_on_.count(turn);
  if (completed < started_.size())
    violation(std::to_string(started_.size() - completed) + " turn(s) never completed");
}

}  // namespace parley::bench
