// The POSIX reads and writes planning and applying share.

#include "actors/patch/detail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace parley::patch::detail {

std::string describe(int err) {
  return std::error_code(err, std::generic_category()).message();
}

std::optional<std::string> read_fd(int fd, int& err) {
  if (fd < 0) {
    err = errno;
    return std::nullopt;
  }
  std::string content;
  char buf[65536];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

std::optional<std::string> read_all(const std::string& path, int& err) {
  return read_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC), err);
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace parley::patch::detail
