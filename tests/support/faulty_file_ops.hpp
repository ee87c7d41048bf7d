#pragma once
// A file layer for tests that fails chosen system calls of the local store's
// rollout writer: the Nth call and the ones after it, or every write while
// the "disk" is full. Counted and switched from any thread.

#include <atomic>
#include <cerrno>
#include <memory>

#include "actors/store/file_ops.hpp"

namespace parley::test {

class faulty_file_ops final : public store::file_ops {
 public:
  /// Calls that change the disk (open, write, sync, truncate, mkdir) are
  /// numbered from 0; `fail_from` .. `fail_from + count - 1` fail with `err`.
  void fail_calls(long from, long count, int err) {
    err_.store(err);
    fail_from_.store(from);
    fail_to_.store(from + count);
  }
  /// Every call that writes fails with `err` until heal() (a full disk: 0
  /// bytes written; `short_first` lets half of the first write through).
  void break_disk(int err, bool short_first = false) {
    err_.store(err);
    short_write_.store(short_first);
    broken_.store(true);
  }
  void heal() {
    broken_.store(false);
    fail_from_.store(-1);
    fail_to_.store(-1);
  }
  long calls() const { return calls_.load(); }
  long failed() const { return failed_.load(); }

  int open(const char* path, int flags, mode_t mode) override {
    if (fails()) return -1;
    return real_->open(path, flags, mode);
  }
  ssize_t write(int fd, const void* data, size_t size) override {
    if (fails(true)) {
      if (short_write_.exchange(false) && size > 1) return real_->write(fd, data, size / 2);
      return -1;
    }
    return real_->write(fd, data, size);
  }
  ssize_t pread(int fd, void* data, size_t size, off_t at) override {
    return real_->pread(fd, data, size, at);
  }
  int fdatasync(int fd) override {
    if (fails(true)) return -1;
    return real_->fdatasync(fd);
  }
  int ftruncate(int fd, off_t size) override {
    if (fails()) return -1;
    return real_->ftruncate(fd, size);
  }
  int fsize(int fd, off_t* size) override { return real_->fsize(fd, size); }
  int close(int fd) override { return real_->close(fd); }
  int unlink(const char* path) override { return real_->unlink(path); }
  int make_dirs(const char* dir) override {
    if (fails()) return -1;
    return real_->make_dirs(dir);
  }

 private:
  /// Numbers this call; whether it fails (errno set). `writes`: a broken
  /// disk fails it (a full disk still opens, truncates and lists files).
  bool fails(bool writes = false) {
    long n = calls_.fetch_add(1);
    bool fail = (n >= fail_from_.load() && n < fail_to_.load()) || (writes && broken_.load());
    if (fail) {
      ++failed_;
      errno = err_.load();
    }
    return fail;
  }

  std::shared_ptr<store::file_ops> real_ = store::posix_file_ops();
  std::atomic<long> calls_{0};
  std::atomic<long> failed_{0};
  std::atomic<long> fail_from_{-1};
  std::atomic<long> fail_to_{-1};
  std::atomic<int> err_{ENOSPC};
  std::atomic<bool> broken_{false};
  std::atomic<bool> short_write_{false};
};

}  // namespace parley::test
