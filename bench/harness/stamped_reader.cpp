#include "bench/harness/stamped_reader.hpp"

#include <cerrno>
#include <poll.h>
#include <unistd.h>

namespace parley::bench {

stamped_reader::stamped_reader(int fd) : fd_(fd) {
  if (::pipe(stop_pipe_) != 0) stop_pipe_[0] = stop_pipe_[1] = -1;
  thread_ = std::thread([this] { run(); });
}

stamped_reader::~stamped_reader() {
  if (stop_pipe_[1] >= 0) {
    char c = 1;
    (void)!::write(stop_pipe_[1], &c, 1);
  }
  thread_.join();
  for (int fd : stop_pipe_)
    if (fd >= 0) ::close(fd);
}

void stamped_reader::run() {
  std::string partial;
  char chunk[65536];
  for (;;) {
    pollfd pfds[2] = {{fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    int rc = ::poll(pfds, stop_pipe_[0] >= 0 ? 2 : 1, -1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || (pfds[1].revents & POLLIN) != 0) break;
    auto n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    auto now = std::chrono::steady_clock::now();
    std::deque<stamped_line> got;
    size_t start = 0;
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      if (chunk[i] != '\n') continue;
      partial.append(chunk + start, i - start);
      got.push_back({std::move(partial), now});
      partial.clear();
      start = i + 1;
    }
    partial.append(chunk + start, static_cast<size_t>(n) - start);
    if (got.empty()) continue;
    std::lock_guard<std::mutex> lock{mtx_};
    for (auto& l : got) lines_.push_back(std::move(l));
    ready_.notify_one();
  }
  std::lock_guard<std::mutex> lock{mtx_};
  ended_ = true;
  ready_.notify_all();
}

std::optional<stamped_line> stamped_reader::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock{mtx_};
  ready_.wait_for(lock, timeout, [this] { return !lines_.empty() || ended_; });
  if (lines_.empty()) return std::nullopt;
  auto line = std::move(lines_.front());
  lines_.pop_front();
  return line;
}

bool stamped_reader::eof() const {
  std::lock_guard<std::mutex> lock{mtx_};
  return ended_ && lines_.empty();
}

}  // namespace parley::bench
