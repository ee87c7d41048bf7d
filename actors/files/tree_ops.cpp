// fs/createDirectory, fs/remove and fs/copy: directories made, removed and
// copied one name at a time through descriptors, never following a symlink
// met on the way down.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "actors/files/detail.hpp"
#include "actors/files/file_ops.hpp"

namespace parley::files {
namespace {

namespace fs = std::filesystem;
using detail::join;

constexpr int dir_flags = O_RDONLY | O_DIRECTORY;

/// The names in directory `fd` (not "." or ".."); false with errno on failure.
bool list_names(int fd, std::vector<std::string>& names) {
  int copy = ::dup(fd);
  if (copy < 0) return false;
  DIR* d = ::fdopendir(copy);
  if (!d) {
    ::close(copy);
    return false;
  }
  ::rewinddir(d);
  errno = 0;
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  int err = errno;
  ::closedir(d);
  errno = err;
  return err == 0;
}

/// Empties directory `name` in `parent` (never following a symlink in it)
/// and removes it. 0 or an errno.
int remove_tree(int parent, const std::string& name) {
  unique_fd dir(::openat(parent, name.c_str(), dir_flags | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return errno;
  std::vector<std::string> names;
  if (!list_names(dir.get(), names)) return errno;
  for (const auto& n : names) {
    struct stat st {};
    if (::fstatat(dir.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return errno;
    }
    int err = S_ISDIR(st.st_mode) ? remove_tree(dir.get(), n)
              : ::unlinkat(dir.get(), n.c_str(), 0) == 0 ? 0
                                                          : errno;
    if (err != 0 && err != ENOENT) return err;
  }
  return ::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 ? 0 : errno;
}

/// Copies the symlink `name` of `from` as a symlink named `to_name` in `to`.
int copy_symlink(int from, const std::string& name, int to, const std::string& to_name) {
  std::string target(4096, '\0');
  auto n = ::readlinkat(from, name.c_str(), target.data(), target.size());
  if (n < 0) return errno;
  target.resize(static_cast<size_t>(n));
  ::unlinkat(to, to_name.c_str(), 0);  // like a file copy, it replaces
  return ::symlinkat(target.c_str(), to, to_name.c_str()) == 0 ? 0 : errno;
}

struct tree_copy {
  std::string failed_at;  // the source path that failed, for the message
  std::optional<failure> refused;

  /// Copies regular file `name` of `from` to `to_name` in `to`.
  int copy_file(int from, const std::string& name, int to, const std::string& to_name,
                const std::string& shown) {
    unique_fd src(::openat(from, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!src) return errno;
    struct stat st {};
    if (::fstat(src.get(), &st) != 0) return errno;
    if (auto f = detail::unreadable(shown, st, "fs/copy")) {
      refused = f;
      return EPERM;
    }
    return replace_file(
        to, to_name, [&](int fd) { return detail::copy_fd(src.get(), fd); }, st.st_mode & 07777);
  }

  /// Copies `name` of `from` (whatever it is) to `to_name` in `to`.
  int copy_entry(int from, const std::string& name, int to, const std::string& to_name,
                 const std::string& shown) {
    struct stat st {};
    if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return fail(shown);
    int err = 0;
    if (S_ISLNK(st.st_mode)) {
      err = copy_symlink(from, name, to, to_name);
    } else if (S_ISDIR(st.st_mode)) {
      err = copy_dir(from, name, to, to_name, st.st_mode & 07777, shown);
      if (err != 0) return err;  // failed_at set below
    } else {
      err = copy_file(from, name, to, to_name, shown);
    }
    if (err != 0 && failed_at.empty()) failed_at = shown;
    return err;
  }

  int copy_dir(int from, const std::string& name, int to, const std::string& to_name,
               mode_t mode, const std::string& shown) {
    unique_fd src(::openat(from, name.c_str(), dir_flags | O_NOFOLLOW | O_CLOEXEC));
    if (!src) return fail(shown);
    if (::mkdirat(to, to_name.c_str(), mode | 0700) != 0 && errno != EEXIST) return fail(shown);
    unique_fd dst(::openat(to, to_name.c_str(), dir_flags | O_NOFOLLOW | O_CLOEXEC));
    if (!dst) return fail(shown);
    std::vector<std::string> names;
    if (!list_names(src.get(), names)) return fail(shown);
    for (const auto& n : names)
      if (int err = copy_entry(src.get(), n, dst.get(), n, join(shown, n))) return err;
    return 0;
  }

  int fail(const std::string& shown) {
    int err = errno;
    if (failed_at.empty()) failed_at = shown;
    return err;
  }
};

}  // namespace

answer create_directory(const root_set& roots, const std::string& path, bool recursive) {
  auto where = roots.locate(path);
  if (auto* f = std::get_if<failure>(&where)) return *f;
  auto& at = std::get<located>(where);
  if (!recursive) {
    auto parent = open_parent(roots, at);
    if (auto* f = std::get_if<failure>(&parent)) return *f;
    auto& p = std::get<parent_dir>(parent);
    if (::mkdirat(p.dir.get(), p.name.c_str(), 0777) != 0) return io_failure(at.shown, errno);
    return json::object();
  }
  // One component at a time, each opened beneath the roots and checked
  // against the home before anything is made inside it.
  auto dir = open_confined(roots, located{at.root, "", at.root}, dir_flags);
  if (auto* f = std::get_if<failure>(&dir)) return *f;
  std::string prefix;
  auto parts = fs::path(at.relative);
  for (auto it = parts.begin(); it != parts.end(); ++it) {
    const auto& part = it->native();
    prefix = prefix.empty() ? part : prefix + "/" + part;
    located sub{at.root, prefix, join(at.root, prefix)};
    auto next = open_confined(roots, sub, dir_flags);
    if (auto* f = std::get_if<failure>(&next); f && f->os_errno == ENOENT) {
      int parent = std::get<unique_fd>(dir).get();
      if (roots.in_home(join(path_of_fd(parent), part))) return home_failure(at.shown);
      if (::mkdirat(parent, part.c_str(), 0777) != 0 && errno != EEXIST)
        return io_failure(at.shown, errno);
      next = open_confined(roots, sub, dir_flags);
    }
    if (auto* f = std::get_if<failure>(&next)) {
      bool last = std::next(it) == parts.end();
      if (f->os_errno == ENOTDIR) return io_failure(at.shown, last ? EEXIST : ENOTDIR);
      if (f->os_errno != 0) return io_failure(at.shown, f->os_errno);
      return *f;  // outside the roots or in the home, naming where it turned
    }
    dir = std::move(next);
  }
  return json::object();
}

answer remove_path(const root_set& roots, const std::string& path, bool recursive, bool force) {
  auto where = roots.locate(path);
  if (auto* f = std::get_if<failure>(&where)) return *f;
  auto& at = std::get<located>(where);
  if (at.relative.empty())
    return failure{invalid_request,
                   "`" + at.shown + "` is a root of this connection; fs/remove keeps the roots"};
  auto parent = open_parent(roots, at);
  if (auto* f = std::get_if<failure>(&parent)) {
    if (force && f->os_errno == ENOENT) return json::object();
    return *f;
  }
  auto& p = std::get<parent_dir>(parent);
  struct stat st {};
  if (::fstatat(p.dir.get(), p.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (force && errno == ENOENT) return json::object();
    return io_failure(at.shown, errno);
  }
  if (roots.holds_home(join(p.real, p.name)))
    return failure{invalid_request, "`" + at.shown + "` holds parley's home; fs/remove keeps it"};
  int err = 0;
  if (!S_ISDIR(st.st_mode))
    err = ::unlinkat(p.dir.get(), p.name.c_str(), 0) == 0 ? 0 : errno;
  else if (!recursive)
    err = ::unlinkat(p.dir.get(), p.name.c_str(), AT_REMOVEDIR) == 0 ? 0 : errno;
  else
    err = remove_tree(p.dir.get(), p.name);
  if (err != 0) return io_failure(at.shown, err);
  return json::object();
}

answer copy_path(const root_set& roots, const std::string& source, const std::string& destination,
                 bool recursive) {
  auto from_where = roots.locate(source);
  if (auto* f = std::get_if<failure>(&from_where)) return *f;
  auto to_where = roots.locate(destination);
  if (auto* f = std::get_if<failure>(&to_where)) return *f;
  auto& from = std::get<located>(from_where);
  auto& to = std::get<located>(to_where);
  auto from_parent = open_parent(roots, from);
  if (auto* f = std::get_if<failure>(&from_parent)) return *f;
  auto to_parent = open_parent(roots, to);
  if (auto* f = std::get_if<failure>(&to_parent)) return *f;
  auto& fp = std::get<parent_dir>(from_parent);
  auto& tp = std::get<parent_dir>(to_parent);
  struct stat st {};
  if (::fstatat(fp.dir.get(), fp.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return io_failure(from.shown, errno);
  auto from_real = join(fp.real, fp.name);
  if (roots.holds_home(from_real))
    return failure{invalid_request, "`" + from.shown + "` holds parley's home; fs/copy keeps it"};
  tree_copy copy;
  int err = 0;
  if (S_ISDIR(st.st_mode)) {
    if (!recursive)
      return failure{invalid_request,
                     "fs/copy requires recursive: true when sourcePath is a directory"};
    if (is_within(join(tp.real, tp.name), from_real))
      return failure{invalid_request,
                     "fs/copy cannot copy a directory to itself or one of its descendants"};
    err = copy.copy_dir(fp.dir.get(), fp.name, tp.dir.get(), tp.name, st.st_mode & 07777,
                        from.shown);
  } else {
    err = copy.copy_entry(fp.dir.get(), fp.name, tp.dir.get(), tp.name, from.shown);
  }
  if (copy.refused) return *copy.refused;
  if (err != 0) {
    auto f = io_failure(copy.failed_at.empty() ? from.shown : copy.failed_at, err);
    if (S_ISDIR(st.st_mode)) f.message += " (what was copied before stays)";
    return f;
  }
  return json::object();
}

}  // namespace parley::files
