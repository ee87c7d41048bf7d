#pragma once
// The order in which a thread's events leave (pure: no actors, no I/O).
// An action queued with post() runs as soon as everything queued before it
// has run; one queued with post_held() also waits until it is released (the
// store has acknowledged its record), and holds back everything behind it.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

namespace parley {

class event_outbox {
 public:
  using action = std::function<void()>;

  /// Queues `run` behind everything queued, then runs what is ready.
  void post(action run);

  /// Queues `run` held until release(seq); returns that seq.
  uint64_t post_held(action run);

  /// Releases a held action, then runs every ready action at the front.
  /// A seq that is not queued (already run) is ignored.
  void release(uint64_t seq);

  /// Releases a held action without running it (what it would report was
  /// not stored); everything behind it goes on.
  void drop(uint64_t seq);

  bool empty() const { return !entries_ || entries_->empty(); }
  size_t size() const { return entries_ ? entries_->size() : 0; }

 private:
  struct entry {
    uint64_t seq = 0;
    bool ready = false;
    action run;
  };
  void run_ready();
  /// Runs `first` (if any), then every ready action at the front.
  void drain(action first);
  std::deque<entry>& queue();

  /// Made when something has to wait, dropped once it has all run: an
  /// empty std::deque still holds a 512-byte block, and an idle thread
  /// (most of a server's loaded threads) has nothing queued.
  std::unique_ptr<std::deque<entry>> entries_;
  uint64_t next_seq_ = 0;
  bool running_ = false;  // an action posting from inside run_ready() only queues
};

}  // namespace parley
