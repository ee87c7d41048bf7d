#include "actors/store/file_ops.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace parley::store {

namespace {

class posix_ops final : public file_ops {
 public:
  int open(const char* path, int flags, mode_t mode) override { return ::open(path, flags, mode); }
  ssize_t write(int fd, const void* data, size_t size) override { return ::write(fd, data, size); }
  ssize_t pread(int fd, void* data, size_t size, off_t at) override {
    return ::pread(fd, data, size, at);
  }
  int fdatasync(int fd) override { return ::fdatasync(fd); }
  int ftruncate(int fd, off_t size) override { return ::ftruncate(fd, size); }
  int fsize(int fd, off_t* size) override {
    struct stat sb {};
    if (::fstat(fd, &sb) != 0) return -1;
    *size = sb.st_size;
    return 0;
  }
  int close(int fd) override { return ::close(fd); }
  int unlink(const char* path) override { return ::unlink(path); }
  int make_dirs(const char* dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!ec) return 0;
    errno = ec.value();
    return -1;
  }
};

}  // namespace

std::shared_ptr<file_ops> posix_file_ops() {
  static auto ops = std::make_shared<posix_ops>();
  return ops;
}

}  // namespace parley::store
