#pragma once
// A loopback TCP server on raw sockets for the HTTP client's tests, for what
// a real server library will not do on purpose: stall, cut a connection in
// the middle of a body, notice the moment its peer hangs up.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace parley::http::testing {

class raw_server {
 public:
  /// Runs `handler` on a thread of its own for each accepted connection and
  /// closes the socket when it returns. Handlers must end by themselves
  /// (use timeouts): the destructor joins them.
  explicit raw_server(std::function<void(int fd)> handler);
  ~raw_server();
  raw_server(const raw_server&) = delete;
  raw_server& operator=(const raw_server&) = delete;

  uint16_t port() const { return port_; }
  /// http://127.0.0.1:PORT + path
  std::string url(const std::string& path) const;
  int accepted() const { return accepted_.load(); }

 private:
  void accept_loop();

  std::function<void(int)> handler_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::mutex mtx_;
  std::vector<std::thread> connections_;  // guarded by mtx_
  std::thread acceptor_;
};

/// Reads up to the end of a request's head (the blank line); what was read.
std::string read_request_head(int fd);

/// Writes all of `data`; false once the peer is gone (no SIGPIPE).
bool send_all(int fd, std::string_view data);

/// True if the peer closes (or resets) the connection within `timeout`;
/// request bytes still arriving are read and dropped.
bool peer_closes_within(int fd, std::chrono::milliseconds timeout);

/// A loopback port on which nothing listens (bound, never listening, so no
/// one else takes it while `hold` lives). Connecting there is refused.
struct refused_port {
  refused_port();
  ~refused_port();
  refused_port(const refused_port&) = delete;
  refused_port& operator=(const refused_port&) = delete;
  int fd = -1;
  uint16_t port = 0;
};

}  // namespace parley::http::testing
