// fs/getMetadata and fs/readDirectory. A symlink is described by what it
// leads to only where that stays inside the roots; one that leads outside
// is neither a file nor a directory (nothing about the outside leaks).

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "actors/files/detail.hpp"
#include "actors/files/file_ops.hpp"

namespace parley::files {
namespace {

using detail::join;

int64_t ms_of(const struct statx_timestamp& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

/// What a symlink at `at` leads to inside the roots (an O_PATH descriptor),
/// or nothing if it leads outside or nowhere.
unique_fd follow_inside(const root_set& roots, const located& at) {
  auto fd = open_confined(roots, at, O_PATH);
  if (auto* f = std::get_if<unique_fd>(&fd)) return std::move(*f);
  return unique_fd();
}

}  // namespace

answer get_metadata(const root_set& roots, const std::string& path) {
  auto where = roots.locate(path);
  if (auto* f = std::get_if<failure>(&where)) return *f;
  auto& at = std::get<located>(where);
  constexpr unsigned mask = STATX_TYPE | STATX_MTIME | STATX_BTIME;
  struct statx own {};
  struct statx seen {};
  bool is_symlink = false;
  bool followed = true;
  if (at.relative.empty()) {
    auto fd = open_confined(roots, at, O_PATH);
    if (auto* f = std::get_if<failure>(&fd)) return *f;
    if (::statx(std::get<unique_fd>(fd).get(), "", AT_EMPTY_PATH, mask, &own) != 0)
      return io_failure(at.shown, errno);
    seen = own;
  } else {
    auto parent = open_parent(roots, at);
    if (auto* f = std::get_if<failure>(&parent)) return *f;
    auto& p = std::get<parent_dir>(parent);
    if (::statx(p.dir.get(), p.name.c_str(), AT_SYMLINK_NOFOLLOW, mask, &own) != 0)
      return io_failure(at.shown, errno);
    seen = own;
    is_symlink = S_ISLNK(own.stx_mode);
    if (is_symlink) {
      auto target = follow_inside(roots, at);
      followed = target && ::statx(target.get(), "", AT_EMPTY_PATH, mask, &seen) == 0;
      if (!followed) seen = own;
    }
  }
  bool btime = (seen.stx_mask & STATX_BTIME) != 0;
  return json{{"isDirectory", followed && S_ISDIR(seen.stx_mode)},
              {"isFile", followed && S_ISREG(seen.stx_mode)},
              {"isSymlink", is_symlink},
              {"createdAtMs", btime ? ms_of(seen.stx_btime) : 0},
              {"modifiedAtMs", ms_of(seen.stx_mtime)}};
}

answer read_directory(const root_set& roots, const std::string& path) {
  auto where = roots.locate(path);
  if (auto* f = std::get_if<failure>(&where)) return *f;
  auto& at = std::get<located>(where);
  auto opened = open_confined(roots, at, O_RDONLY | O_DIRECTORY);
  if (auto* f = std::get_if<failure>(&opened)) return *f;
  auto& fd = std::get<unique_fd>(opened);
  auto real = path_of_fd(fd.get());
  int copy = ::dup(fd.get());
  DIR* d = copy < 0 ? nullptr : ::fdopendir(copy);
  if (!d) {
    int err = errno;
    if (copy >= 0) ::close(copy);
    return io_failure(at.shown, err);
  }
  struct entry {
    std::string name;
    bool is_dir;
    bool is_file;
  };
  std::vector<entry> entries;
  for (;;) {
    errno = 0;
    auto* e = ::readdir(d);
    if (!e) break;
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (roots.in_home(join(real, name))) continue;  // the home is not shown
    auto type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
    }
    bool is_dir = type == DT_DIR;
    bool is_file = type == DT_REG;
    if (type == DT_LNK) {
      auto target = follow_inside(roots, located{at.root, join(at.relative, name).substr(at.relative.empty() ? 1 : 0), join(at.shown, name)});
      struct stat st {};
      if (target && ::fstat(target.get(), &st) == 0) {
        is_dir = S_ISDIR(st.st_mode);
        is_file = S_ISREG(st.st_mode);
      }
    }
    entries.push_back({std::move(name), is_dir, is_file});
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return io_failure(at.shown, err);
  std::sort(entries.begin(), entries.end(),
            [](const entry& a, const entry& b) { return a.name < b.name; });
  auto list = json::array();
  for (const auto& e : entries)
    list.push_back({{"fileName", e.name}, {"isDirectory", e.is_dir}, {"isFile", e.is_file}});
  return json{{"entries", std::move(list)}};
}

}  // namespace parley::files
