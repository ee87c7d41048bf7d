#include "transport/unix_socket_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "actors/core/log.hpp"

namespace parley::ws {

namespace {

enum class probe_result { gone, stale, live, unknown };

/// Whether a server answers on the socket at `path`; `pid` is the
/// listener's pid when the kernel tells it (SO_PEERCRED), else 0.
probe_result probe(const std::string& path, pid_t& pid, std::string& why) {
  pid = 0;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    why = "the path is too long for a Unix socket";
    return probe_result::unknown;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking: a live server whose backlog is full answers EAGAIN rather
  // than keep us waiting.
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = std::strerror(errno);
    return probe_result::unknown;
  }
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  int err = rc == 0 ? 0 : errno;
  probe_result result = probe_result::unknown;
  if (rc == 0 || err == EAGAIN || err == EINPROGRESS) {
    result = probe_result::live;
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (rc == 0 && ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) pid = cred.pid;
  } else if (err == ECONNREFUSED) {
    result = probe_result::stale;
  } else if (err == ENOENT) {
    result = probe_result::gone;
  } else {
    why = std::strerror(err);
  }
  ::close(fd);
  return result;
}

std::string in_use(const std::string& path, pid_t pid) {
  std::string who = pid > 0 ? " by process " + std::to_string(pid) : "";
  return "unix://" + path + " is in use" + who
         + ": another server is listening on it (stop it, or choose another path)";
}

}  // namespace

unix_socket_claim::unix_socket_claim(std::string path)
    : path_(std::move(path)), lock_path_(path_ + ".lock") {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto dir = fs::path(path_).parent_path();
  if (!dir.empty() && !fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    ::chmod(dir.c_str(), 0700);
  }
  // Who may go on: the holder of PATH.lock. A lock file removed by its
  // holder's shutdown between our open and our flock would be locked in
  // vain (a third server creates a new one), so the lock counts only when
  // the file locked is still the one at the lock path.
  for (;;) {
    lock_fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lock_fd_ < 0)
      throw std::runtime_error("unix://" + path_ + ": cannot open its lock file " + lock_path_
                               + ": " + std::strerror(errno));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(lock_fd_);
      lock_fd_ = -1;
      if (err != EWOULDBLOCK)
        throw std::runtime_error("unix://" + path_ + ": cannot lock " + lock_path_ + ": "
                                 + std::strerror(err));
      pid_t pid = 0;
      std::string why;
      probe(path_, pid, why);
      throw std::runtime_error(in_use(path_, pid) + " (its lock " + lock_path_ + " is held)");
    }
    struct stat held {};
    struct stat there {};
    if (::fstat(lock_fd_, &held) == 0 && ::lstat(lock_path_.c_str(), &there) == 0
        && held.st_dev == there.st_dev && held.st_ino == there.st_ino)
      break;
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // nothing there: ours to bind
    int err = errno;
    ::close(lock_fd_);
    throw std::runtime_error("unix://" + path_ + ": " + std::strerror(err));
  }
  auto refuse = [this](const std::string& message) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw std::runtime_error(message);
  };
  if (!S_ISSOCK(st.st_mode))
    refuse("unix://" + path_
           + " exists and is not a socket; it is left untouched (remove it, or choose another "
             "path)");
  pid_t pid = 0;
  std::string why;
  switch (probe(path_, pid, why)) {
    case probe_result::gone:
      return;
    case probe_result::live:
      refuse(in_use(path_, pid));
      break;
    case probe_result::stale:
      // A socket nobody listens on: left by a server that died.
      PARLEY_INFO("ws event=stale_socket_replaced path={}", path_);
      if (::unlink(path_.c_str()) != 0 && errno != ENOENT)
        refuse("unix://" + path_ + ": cannot remove the stale socket: " + std::strerror(errno));
      return;
    case probe_result::unknown:
      refuse("unix://" + path_ + ": cannot tell whether the socket there is in use (" + why
             + "); it is left untouched");
  }
}

void unix_socket_claim::bound() {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    bound_ = true;
  }
}

unix_socket_claim::~unix_socket_claim() {
  if (lock_fd_ < 0) return;
  struct stat st {};
  bool ours = bound_ && ::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
  if (ours) {
    ::unlink(path_.c_str());
    ::unlink(lock_path_.c_str());  // while still held: see the constructor's loop
  } else if (bound_) {
    PARLEY_WARN("ws event=socket_replaced path={} left in place: it is no longer the socket "
                "this server bound",
                path_);
  }
  ::close(lock_fd_);
}

}  // namespace parley::ws
