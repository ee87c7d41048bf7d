#include "actors/patch/beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>

namespace parley::patch::beneath {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> component_walk_forced{false};

constexpr int dir_flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;

// The kernel's guarantee: no step of the resolution (symlinks, "..", mount
// crossings through magic links such as /proc/self/fd) may leave `root_fd`.
int openat2_beneath(int root_fd, const char* relative) {
  open_how how{};
  how.flags = dir_flags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    auto fd = ::syscall(SYS_openat2, root_fd, relative, &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    // EAGAIN: a concurrent rename raced the resolution; it is safe to retry.
    if (errno != EAGAIN && errno != EINTR) return -1;
  }
}

// Without openat2: refuse every symlink and "..", one component at a time.
// Stricter than RESOLVE_BENEATH (a symlink within the root fails too), which
// errs on the side of writing nothing.
int walk_beneath(int root_fd, const fs::path& relative) {
  unique_fd cur(::openat(root_fd, ".", dir_flags));
  if (!cur) return -1;
  for (const auto& part : relative) {
    if (part.empty() || part == ".") continue;
    if (part == ".." || part.is_absolute()) {
      errno = EXDEV;
      return -1;
    }
    unique_fd next(::openat(cur.get(), part.c_str(), dir_flags | O_NOFOLLOW));
    if (!next) return -1;
    cur = std::move(next);
  }
  return cur.release();
}

unique_fd open_root(const std::string& root) {
  return unique_fd(::open(root.empty() ? "/" : root.c_str(), dir_flags));
}

int open_beneath(int root_fd, bool restricted, const std::string& relative) {
  const char* rel = relative.empty() ? "." : relative.c_str();
  if (!restricted) return ::openat(root_fd, rel, dir_flags);
  if (!component_walk_forced.load()) {
    int fd = openat2_beneath(root_fd, rel);
    if (fd >= 0 || errno != ENOSYS) return fd;
  }
  return walk_beneath(root_fd, relative);
}

}  // namespace

unique_fd& unique_fd::operator=(unique_fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

unique_fd::~unique_fd() {
  if (fd_ >= 0) ::close(fd_);
}

int unique_fd::release() noexcept {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

fs::path real_path_of(const fs::path& path) {
  std::error_code ec;
  auto parent = fs::weakly_canonical(path.parent_path(), ec);
  if (ec) return path;  // unreadable: the lexical path; the write decides
  return parent / path.filename();
}

unique_fd open_dir(const std::string& root, const std::string& relative) {
  auto root_fd = open_root(root);
  if (!root_fd) return root_fd;
  return unique_fd(open_beneath(root_fd.get(), !root.empty(), relative));
}

unique_fd make_dirs(const std::string& root, const std::string& relative,
                    std::vector<created_dir>& created,
                    const std::function<bool(const std::string&)>& fault) {
  auto root_fd = open_root(root);
  if (!root_fd) return root_fd;
  bool restricted = !root.empty();
  unique_fd dir(open_beneath(root_fd.get(), restricted, relative));
  if (dir || errno != ENOENT) return dir;
  // Walk down from the root: each prefix is opened beneath the root again,
  // so a symlink met on the way is judged against the root, not the parent.
  unique_fd parent(open_beneath(root_fd.get(), restricted, ""));
  fs::path prefix;
  for (const auto& part : fs::path(relative)) {
    if (!parent) return parent;
    prefix /= part;
    unique_fd next(open_beneath(root_fd.get(), restricted, prefix.native()));
    if (!next && errno == ENOENT) {
      if (fault && fault(prefix.native())) {
        errno = EIO;
        return unique_fd();
      }
      if (::mkdirat(parent.get(), part.c_str(), 0777) == 0) {
        created.push_back({unique_fd(::dup(parent.get())), part.native(), prefix.native()});
      } else if (errno != EEXIST) {
        return unique_fd();
      }
      next = unique_fd(open_beneath(root_fd.get(), restricted, prefix.native()));
    }
    parent = std::move(next);
  }
  return parent;
}

void detail::force_component_walk(bool on) {
  component_walk_forced.store(on);
}

}  // namespace parley::patch::beneath
