#pragma once
// A Unix socket path that is never clobbered (issue 25). Before binding,
// parley makes sure that what is at the path may be replaced: a path that
// holds anything but a socket is refused and left alone; a socket a live
// server answers on is refused ("in use", with the peer's pid from
// SO_PEERCRED); only a stale socket (connection refused) is removed. Two
// servers starting at once on one path cannot both win: each first takes an
// exclusive flock on PATH.lock beside it and holds it while it serves. At
// shutdown the path is removed only if it is still the socket that was bound
// (same device and inode), so a server never removes another's socket.

#include <string>
#include <sys/types.h>

namespace parley::ws {

class unix_socket_claim {
 public:
  /// Takes PATH.lock (creating the folder 0700 if it is missing), then
  /// checks what is at `path` and removes a stale socket. Throws
  /// std::runtime_error with a sentence for the operator when the path may
  /// not be used. The caller binds next, then calls bound().
  explicit unix_socket_claim(std::string path);
  /// Releases the lock; removes the socket and the lock file if the socket
  /// at the path is still the one bound.
  ~unix_socket_claim();
  unix_socket_claim(const unix_socket_claim&) = delete;
  unix_socket_claim& operator=(const unix_socket_claim&) = delete;

  /// Remembers the device and inode of the socket just bound at the path.
  void bound();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string lock_path_;
  int lock_fd_ = -1;
  bool bound_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace parley::ws
