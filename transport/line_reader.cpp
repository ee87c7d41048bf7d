#include "transport/line_reader.hpp"

#include <poll.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <cerrno>
#include <string>

#include "actors/core/atoms.hpp"
#include "actors/core/log.hpp"

namespace parley {

line_reader::line_reader(int fd, caf::actor sink, int stop_fd, std::function<void()> on_stop)
    : fd_(fd), stop_fd_(stop_fd), sink_(std::move(sink)), on_stop_(std::move(on_stop)) {
  thread_ = std::thread([this] { run(); });
}

line_reader::~line_reader() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void line_reader::run() {
  std::string buffer;
  bool skipping = false;  // inside an over-long line
  char chunk[65536];
  auto deliver = [&](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    send_line(sink_, std::move(line));
  };
  while (!stop_) {
    pollfd pfds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int rc = ::poll(pfds, stop_fd_ >= 0 ? 2 : 1, 100);
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) continue;
    if (stop_fd_ >= 0 && (pfds[1].revents & POLLIN) != 0) {
      PARLEY_INFO("line_reader event=stop_signal");
      if (on_stop_) on_stop_();
      break;
    }
    if (pfds[0].revents == 0) continue;
    auto n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    size_t start = 0;
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      if (chunk[i] != '\n') continue;
      if (!skipping) {
        buffer.append(chunk + start, i - start);
        deliver(std::move(buffer));
      }
      buffer.clear();
      skipping = false;
      start = i + 1;
    }
    if (!skipping) buffer.append(chunk + start, static_cast<size_t>(n) - start);
    if (buffer.size() > max_line_bytes) {
      PARLEY_ERROR("line_reader event=line_too_long limit_bytes={} dropped", max_line_bytes);
      buffer.clear();
      skipping = true;
    }
  }
  if (stop_) return;
  if (!buffer.empty() && !skipping) deliver(std::move(buffer));  // a last line without '\n'
  caf::anon_send(sink_, atom::eof::value);
}

}  // namespace parley
