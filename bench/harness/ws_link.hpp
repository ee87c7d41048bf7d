#pragma once
// WebSocket connections to one server (TCP or a Unix socket), each its own
// JSON-RPC session, on one Boost.Beast I/O thread: every text frame is
// stamped when it arrived and queued for the main loop; the main loop's
// sends are posted to the I/O thread, which writes one frame at a time per
// connection.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/harness/link.hpp"
#include "bench/harness/options.hpp"

namespace parley::bench {

class ws_link final : public server_link {
 public:
  /// Connects nothing yet; `to` is a tcp or unix_socket endpoint.
  explicit ws_link(endpoint to);
  ~ws_link() override;  // drops every connection and stops the I/O thread
  ws_link(const ws_link&) = delete;
  ws_link& operator=(const ws_link&) = delete;

  /// Opens `count` more connections (TCP or Unix connect, then the
  /// WebSocket handshake) and starts reading them. A refused connect is
  /// retried until `deadline` (the server may still be starting). Returns
  /// the index of the first new connection; throws std::runtime_error when
  /// one cannot be opened by then.
  int open(int count, std::chrono::steady_clock::time_point deadline);
  int connections() const { return static_cast<int>(connections_.size()); }

  std::optional<stamped_message> next(std::chrono::milliseconds timeout) override;
  bool ended() const override;
  void send(int connection, std::string text) override;
  /// Sends a close frame on each connection and waits for the server's.
  void close(std::chrono::milliseconds timeout) override;

  struct connection;  // one WebSocket, its read buffer and write queue
  /// What the I/O thread hands the main loop (guarded by its mutex).
  struct inbox {
    std::mutex mtx;
    std::condition_variable ready;
    std::deque<stamped_message> messages;
    int open = 0;  // connections still reading
    void deliver(stamped_message m);
    void closed();
  };

 private:
  struct io_state;  // the I/O context and what keeps it running

  endpoint to_;
  std::unique_ptr<io_state> io_;
  mutable inbox inbox_;
  std::vector<std::unique_ptr<connection>> connections_;  // only grows while the I/O thread runs
  std::thread io_thread_;
};

}  // namespace parley::bench
