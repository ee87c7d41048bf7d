#include "actors/threads/event_outbox.hpp"

namespace parley {

void event_outbox::post(action run) {
  entries_.push_back({next_seq_++, true, std::move(run)});
  run_ready();
}

uint64_t event_outbox::post_held(action run) {
  auto seq = next_seq_++;
  entries_.push_back({seq, false, std::move(run)});
  return seq;
}

void event_outbox::release(uint64_t seq) {
  for (auto& e : entries_)
    if (e.seq == seq) e.ready = true;
  run_ready();
}

void event_outbox::drop(uint64_t seq) {
  for (auto& e : entries_)
    if (e.seq == seq) {
      e.ready = true;
      e.run = [] {};
    }
  run_ready();
}

void event_outbox::run_ready() {
  if (running_) return;  // the outer loop picks up what was just queued
  running_ = true;
  struct reset {
    bool& flag;
    ~reset() { flag = false; }
  } guard{running_};
  while (!entries_.empty() && entries_.front().ready) {
    auto run = std::move(entries_.front().run);
    entries_.pop_front();
    run();
  }
}

}  // namespace parley
