#include "transport/chat/approval_queue.hpp"

#include <algorithm>

namespace parley {

bool approval_queue::enqueue(protocol::request_id id, std::string method, protocol::json params,
                             protocol::json context) {
  auto same = [&](const queued_approval& q) { return q.id == id; };
  if (std::any_of(pending_.begin(), pending_.end(), same)) return false;
  std::string thread;
  if (params.is_object() && params.contains("threadId") && params["threadId"].is_string())
    thread = params["threadId"].get<std::string>();
  pending_.push_back(
      {std::move(id), std::move(method), std::move(params), std::move(context), std::move(thread)});
  return true;
}

const queued_approval* approval_queue::current() const {
  return pending_.empty() ? nullptr : &pending_.front();
}

std::optional<queued_approval> approval_queue::advance() {
  if (pending_.empty()) return std::nullopt;
  auto front = std::move(pending_.front());
  pending_.pop_front();
  return front;
}

bool approval_queue::resolve(const protocol::request_id& id) {
  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const queued_approval& q) { return q.id == id; });
  if (it == pending_.end()) return false;
  pending_.erase(it);
  return true;
}

std::vector<protocol::request_id> approval_queue::abort_all() {
  std::vector<protocol::request_id> ids;
  ids.reserve(pending_.size());
  for (auto& q : pending_) ids.push_back(q.id);
  pending_.clear();
  return ids;
}

bool approval_queue::has_thread(const std::string& thread_id) const {
  return std::any_of(pending_.begin(), pending_.end(),
                     [&](const queued_approval& q) { return q.thread_id == thread_id; });
}

}  // namespace parley
