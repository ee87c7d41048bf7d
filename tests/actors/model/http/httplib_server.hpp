#pragma once
// A cpp-httplib server for the HTTP client's tests: a loopback port of its
// own (HTTP or HTTPS), listening on a thread, stopped and joined when it goes. The listen
// backlog is raised from the library's 5: a thousand clients connecting at
// once would otherwise see dropped handshakes and resets.

#include <chrono>
#include <httplib.h>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <thread>

namespace parley::http::testing {

struct httplib_server {
  httplib_server() : owned(std::make_unique<httplib::Server>()), svr(*owned) {}
  /// HTTPS with this certificate and key (PEM files).
  httplib_server(const std::string& cert, const std::string& key)
      : owned(std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str())),
        svr(*owned),
        scheme("https") {}

  std::unique_ptr<httplib::Server> owned;
  httplib::Server& svr;
  std::string scheme = "http";
  int port = 0;
  std::thread thread;

  void start() {
    int listen_fd = -1;
    svr.set_socket_options([&](int fd) {
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      listen_fd = fd;
    });
    port = svr.bind_to_any_port("127.0.0.1");
    ::listen(listen_fd, SOMAXCONN);  // again, with a bigger backlog
    thread = std::thread([this] { svr.listen_after_bind(); });
    while (!svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~httplib_server() {
    svr.stop();
    if (thread.joinable()) thread.join();
  }
  std::string url(const std::string& path) const {
    return scheme + "://127.0.0.1:" + std::to_string(port) + path;
  }
};

}  // namespace parley::http::testing
