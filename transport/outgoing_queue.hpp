#pragma once
// What a client has not read yet, and the backpressure rules over it
// (issues 12 and 22). Every transport's writer owns one per client (the
// WebSocket session on its I/O thread, stdio's writer thread); pure, so
// tests drive it byte by byte.
//
// Four marks, all derived from the cap (`max_bytes`):
// - past an eighth of it (the high-water mark) the client is *pressing*:
//   the model streams of the threads it is subscribed to stop being read,
//   until the queue is back under a sixteenth (the low-water mark). Deltas
//   are held back at the model, never dropped. The marks are low because what
//   was read before a hold is felt still arrives: up to 24 KiB of a stream's
//   body (actors/model/http_model.cpp's flow window of 8 KiB, and the piece
//   curl hands on then, up to 16 KiB), written about twice as large as
//   notifications, for every stream of the client's threads.
// - past half of it a WebSocket client's new requests are refused with
//   Codex's -32001 "Server overloaded; retry later." (it may retry once it
//   has caught up);
// - a notification that would take it past the cap is not queued: the
//   client is to be disconnected (the stream is paused long before, so only
//   what does not pause, command output say, gets a client there);
// - replies and the server's own requests (approvals) are small and someone
//   waits on them: they may use a reserve of another eighth above the cap,
//   so an approval still reaches a client whose queue is full of deltas.
// Replies to the server's requests are never refused either: refusing a
// reply would leave an approval waiting, and the client sent it before it
// knew.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace parley::ws {

class outgoing_queue {
 public:
  explicit outgoing_queue(size_t max_bytes) : max_bytes_(max_bytes) {}

  /// Queues a line. False when it does not fit (past the cap, or past the
  /// reserve for a reply or request): the client must be disconnected (the
  /// line is dropped).
  [[nodiscard]] bool push(std::string frame);
  /// The frame to write next (the queue must not be empty). References to
  /// queued frames stay valid until they are popped (a writer thread may
  /// read them while another pushes, under the caller's lock).
  const std::string& front() const { return frames_.front(); }
  const std::string& at(size_t i) const { return frames_[i]; }
  size_t size() const { return frames_.size(); }
  /// The front frame was written.
  void pop();
  bool empty() const { return frames_.empty(); }
  size_t bytes() const { return bytes_; }
  size_t max_bytes() const { return max_bytes_; }

  /// Past half the cap: new requests are refused.
  bool overloaded() const { return bytes_ > max_bytes_ / 2; }

  /// Whether the client is pressing now: it went past the high-water mark
  /// and has not come back under the low-water mark since.
  bool pressing() const { return pressing_; }
  /// The change of pressing() since the last call, if any: true when the
  /// streams are to pause, false when they may go on. Each crossing is
  /// reported once, so a writer signals only edges.
  std::optional<bool> pressure_change();

  size_t high_water() const { return max_bytes_ / 8; }
  size_t low_water() const { return max_bytes_ / 16; }
  size_t reserve() const { return max_bytes_ / 8; }

  /// Whether a line the server writes is a notification (no id). nlohmann
  /// writes keys sorted: a notification starts with "emittedAtMs" or
  /// "method", a reply with "error" or "id", a request with "id".
  static bool is_notification(std::string_view line);

  /// For a line the client sent: the -32001 error to answer it with when
  /// the queue is overloaded and the line is a request; nullopt lets it
  /// through (not overloaded, or a reply, a notification, or not JSON-RPC
  /// at all: the session's own checks answer those).
  std::optional<std::string> refusal(const std::string& incoming) const;

 private:
  void update_pressure();

  size_t max_bytes_;
  size_t bytes_ = 0;
  bool pressing_ = false;
  bool reported_ = false;  // what pressure_change() said last
  std::deque<std::string> frames_;
};

}  // namespace parley::ws
