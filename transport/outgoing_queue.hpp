#pragma once
// What a WebSocket client has not read yet, and the backpressure rule over
// it (issue 12): a client that reads slower than its session writes first
// has its new requests refused with Codex's -32001 "Server overloaded; retry
// later." (past half the bound: it may retry once it has caught up), and is
// disconnected past the bound. Replies to the server's own requests and
// notifications are never refused: refusing a reply would leave an approval
// waiting, and the client sent it before it knew. Pure: the session on the
// I/O thread owns one per client; tests drive it byte by byte.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

namespace parley::ws {

class outgoing_queue {
 public:
  explicit outgoing_queue(size_t max_bytes) : max_bytes_(max_bytes) {}

  /// Queues a frame. False when the queue is now past its bound: the
  /// client must be disconnected (the frame is dropped).
  [[nodiscard]] bool push(std::string frame);
  /// The frame to write next (the queue must not be empty).
  const std::string& front() const { return frames_.front(); }
  /// The front frame was written.
  void pop();
  bool empty() const { return frames_.empty(); }
  size_t bytes() const { return bytes_; }

  /// Past half the bound: new requests are refused.
  bool overloaded() const { return bytes_ > max_bytes_ / 2; }

  /// For a line the client sent: the -32001 error to answer it with when
  /// the queue is overloaded and the line is a request; nullopt lets it
  /// through (not overloaded, or a reply, a notification, or not JSON-RPC
  /// at all: the session's own checks answer those).
  std::optional<std::string> refusal(const std::string& incoming) const;

 private:
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::deque<std::string> frames_;
};

}  // namespace parley::ws
