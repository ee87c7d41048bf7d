#pragma once
// The system calls the local store's rollout writer makes, behind a seam of
// their own: the store uses the POSIX ones; a test puts a layer that fails
// chosen calls (ENOSPC, EIO, EROFS) under a real store to check that a
// failed write is never reported done and never leaves a hole.

#include <sys/types.h>

#include <cstddef>
#include <memory>

namespace parley::store {

/// Each call answers like its POSIX namesake: -1 with errno set on failure.
class file_ops {
 public:
  virtual ~file_ops() = default;
  virtual int open(const char* path, int flags, mode_t mode) = 0;
  virtual ssize_t write(int fd, const void* data, size_t size) = 0;
  virtual ssize_t pread(int fd, void* data, size_t size, off_t at) = 0;
  virtual int fdatasync(int fd) = 0;
  virtual int ftruncate(int fd, off_t size) = 0;
  /// The file's size in `size`.
  virtual int fsize(int fd, off_t* size) = 0;
  virtual int close(int fd) = 0;
  /// Creates `dir` and its parents (0 or -1 with errno).
  virtual int make_dirs(const char* dir) = 0;
  virtual int unlink(const char* path) = 0;
};

/// The real system calls.
std::shared_ptr<file_ops> posix_file_ops();

}  // namespace parley::store
