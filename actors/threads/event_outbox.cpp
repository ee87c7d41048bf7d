#include "actors/threads/event_outbox.hpp"

namespace parley {

std::deque<event_outbox::entry>& event_outbox::queue() {
  if (!entries_) entries_ = std::make_unique<std::deque<entry>>();
  return *entries_;
}

void event_outbox::post(action run) {
  if (running_ || !empty()) {
    queue().push_back({next_seq_++, true, std::move(run)});
    return run_ready();
  }
  ++next_seq_;  // nothing is ahead of it: it runs now, as queuing it would
  drain(std::move(run));
}

uint64_t event_outbox::post_held(action run) {
  auto seq = next_seq_++;
  queue().push_back({seq, false, std::move(run)});
  return seq;
}

void event_outbox::release(uint64_t seq) {
  if (!entries_) return;
  for (auto& e : *entries_)
    if (e.seq == seq) e.ready = true;
  run_ready();
}

void event_outbox::drop(uint64_t seq) {
  if (!entries_) return;
  for (auto& e : *entries_)
    if (e.seq == seq) {
      e.ready = true;
      e.run = [] {};
    }
  run_ready();
}

void event_outbox::run_ready() {
  if (running_) return;  // the outer loop picks up what was just queued
  drain({});
}

void event_outbox::drain(action first) {
  running_ = true;
  struct reset {
    bool& flag;
    ~reset() { flag = false; }
  } guard{running_};
  if (first) first();
  // An action may post (queue) more; `entries_` stays while this loop runs.
  while (entries_ && !entries_->empty() && entries_->front().ready) {
    auto run = std::move(entries_->front().run);
    entries_->pop_front();
    run();
  }
  if (entries_ && entries_->empty()) entries_.reset();
}

}  // namespace parley
