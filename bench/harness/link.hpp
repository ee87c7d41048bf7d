#pragma once
// How the harness's main loop talks to the server, whatever carries it: one
// session over the server's stdin/stdout, or several WebSocket connections.
// Every message is stamped when it arrived (on a thread of the link's own),
// so latencies never include the main loop's backlog.

#include <chrono>
#include <optional>
#include <string>

namespace parley::bench {

struct stamped_message {
  std::string text;
  std::chrono::steady_clock::time_point arrived;
  int connection = 0;  // which session it came on
};

class server_link {
 public:
  virtual ~server_link() = default;

  /// The next message from any connection, in arrival order, waiting at
  /// most `timeout`; nullopt on timeout or once ended().
  virtual std::optional<stamped_message> next(std::chrono::milliseconds timeout) = 0;
  /// Whether every connection is gone and every message was taken.
  virtual bool ended() const = 0;
  /// Sends one JSON-RPC message on `connection` (never blocks on the server).
  virtual void send(int connection, std::string text) = 0;
  /// Ends the client side in order (stdin closed, or each WebSocket closed)
  /// and discards what still arrives, waiting at most `timeout`.
  virtual void close(std::chrono::milliseconds timeout) = 0;
};

}  // namespace parley::bench
