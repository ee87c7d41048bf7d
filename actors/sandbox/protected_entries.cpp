#include "actors/sandbox/protected_entries.hpp"

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace parley::sandbox {

namespace {

constexpr mode_t placeholder_mode = 0400;

bool is_empty_directory(int fd) {
  // Not openat(fd, "."): that needs search permission, which mode 0400
  // denies to a caller that is not root.
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0 || lseek(copy, 0, SEEK_SET) != 0)
    return false;
  DIR* dir = fdopendir(copy);
  if (!dir) {
    close(copy);
    return false;
  }
  bool empty = true;
  while (auto* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  closedir(dir);
  return empty;
}

/// The placeholder still at `path` is the one open as `fd`, and is ours.
bool is_placeholder(int fd, const std::string& path) {
  struct stat held {};
  struct stat named {};
  if (fstat(fd, &held) != 0 || lstat(path.c_str(), &named) != 0)
    return false;
  return held.st_dev == named.st_dev && held.st_ino == named.st_ino && S_ISDIR(held.st_mode)
         && (held.st_mode & 07777) == placeholder_mode && is_empty_directory(fd);
}

} // namespace

placeholder_set::~placeholder_set() {
  release();
}

outcome placeholder_set::acquire(const std::vector<std::string>& paths,
                                 std::vector<std::string>& skipped) {
  for (const auto& path : paths) {
    for (int attempt = 0;; ++attempt) {
      if (attempt == 10)
        return failure{"placeholder keeps changing: " + path, EAGAIN};
      if (mkdir(path.c_str(), placeholder_mode) != 0) {
        if (errno == EACCES || errno == EROFS || errno == EPERM) {
          skipped.push_back(path);
          break;
        }
        if (errno != EEXIST)
          return failed("create placeholder " + path);
      }
      int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT)
          continue; // removed by a launcher finishing just now
        if (errno == ENOTDIR || errno == ELOOP)
          break; // a real file appeared: the sandbox protects it as such
        return failed("open placeholder " + path);
      }
      if (flock(fd, LOCK_SH) != 0) {
        close(fd);
        return failed("lock placeholder " + path);
      }
      struct stat held {};
      struct stat named {};
      if (fstat(fd, &held) == 0 && lstat(path.c_str(), &named) == 0
          && held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
        // Ours to remove later only while it still looks like a placeholder;
        // a real directory appearing concurrently is protected as it is.
        held_.emplace_back(path, fd);
        break;
      }
      close(fd);
    }
  }
  return std::nullopt;
}

void placeholder_set::release() {
  for (auto& [path, fd] : held_) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && is_placeholder(fd, path))
      (void) rmdir(path.c_str());
    close(fd);
  }
  held_.clear();
}

} // namespace parley::sandbox
