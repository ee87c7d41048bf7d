// fs/readFile and fs/writeFile.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>

#include "protocol/base64.hpp"
#include "actors/files/detail.hpp"
#include "actors/files/file_ops.hpp"

namespace parley::files {
namespace {

namespace fs = std::filesystem;

std::atomic<unsigned> temp_counter{0};

}  // namespace

int detail::write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

int detail::copy_fd(int from, int to) {
  char buf[65536];
  for (;;) {
    auto n = ::read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    if (int err = write_all(to, std::string(buf, static_cast<size_t>(n)))) return err;
  }
}

std::string detail::join(const std::string& dir, const std::string& name) {
  if (name.empty()) return dir;
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::optional<failure> detail::unreadable(const std::string& shown, const struct stat& st,
                                          const char* method) {
  if (S_ISDIR(st.st_mode)) return failure{invalid_request, "path `" + shown + "` is not a file"};
  if (!S_ISREG(st.st_mode))
    return failure{invalid_request, "path `" + shown
                                        + "` is not a regular file (a device, fifo or socket); "
                                        + method + " reads only regular files"};
  if (st.st_nlink > 1)
    return failure{invalid_request,
                   "path `" + shown + "` has " + std::to_string(st.st_nlink)
                       + " hard links; parley reads no hard-linked file, as another of its "
                         "names may lie outside the roots this connection may use"};
  return std::nullopt;
}

int replace_file(int dir, const std::string& name, const std::function<int(int fd)>& fill,
                 mode_t mode) {
  struct stat old {};
  bool exists = ::fstatat(dir, name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode);
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = "." + name.substr(0, 100) + ".parley-" + std::to_string(::getpid()) + "-"
           + std::to_string(temp_counter.fetch_add(1)) + ".tmp";
    fd = ::openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) return errno;
  }
  if (fd < 0) return EEXIST;
  int err = 0;
  if (exists && ::fchmod(fd, old.st_mode & 07777) != 0) err = errno;
  if (err == 0) err = fill(fd);
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  bool ok = err == 0;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::renameat(dir, temp.c_str(), dir, name.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlinkat(dir, temp.c_str(), 0);
    return err;
  }
  ::fsync(dir);
  return 0;
}

answer read_file(const root_set& roots, const std::string& path, size_t cap) {
  auto where = roots.locate(path);
  if (auto* f = std::get_if<failure>(&where)) return *f;
  auto& at = std::get<located>(where);
  auto opened = open_confined(roots, at, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (auto* f = std::get_if<failure>(&opened)) return *f;
  auto& fd = std::get<unique_fd>(opened);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_failure(at.shown, errno);
  if (auto f = detail::unreadable(at.shown, st, "fs/readFile")) return *f;
  auto too_big = [&](const std::string& size) {
    return failure{invalid_request, "`" + at.shown + "` is " + size + " bytes; fs/readFile reads at most "
                                        + std::to_string(cap) + " bytes"};
  };
  if (static_cast<size_t>(st.st_size) > cap) return too_big(std::to_string(st.st_size));
  std::string content;
  content.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_failure(at.shown, errno);
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > cap) return too_big("more than " + std::to_string(cap) + " (it grew while read)");
  }
  return json{{"dataBase64", protocol::base64_encode(content)}};
}

answer write_file(const root_set& roots, const std::string& path, const std::string& data_base64,
                  size_t cap) {
  std::string why;
  auto data = protocol::base64_decode(data_base64, why);
  if (!data)
    return failure{invalid_request, "fs/writeFile requires valid base64 dataBase64: " + why};
  if (data->size() > cap)
    return failure{invalid_request, "fs/writeFile writes at most " + std::to_string(cap)
                                        + " bytes; this is " + std::to_string(data->size())};
  auto where = roots.locate(path);
  if (auto* f = std::get_if<failure>(&where)) return *f;
  auto at = std::get<located>(where);
  // A symlink is written through to its target (as Codex does) only where
  // that target is inside the roots; its directory is opened beneath them
  // again, so a link swapped in meanwhile is replaced, not followed.
  for (int depth = 0; depth < 8; ++depth) {
    auto parent = open_parent(roots, at);
    if (auto* f = std::get_if<failure>(&parent)) return *f;
    auto& p = std::get<parent_dir>(parent);
    struct stat st {};
    if (::fstatat(p.dir.get(), p.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        auto target = fs::weakly_canonical(fs::path(p.real) / p.name, ec);
        if (ec) return io_failure(at.shown, ec.value());
        auto next = roots.locate(target.native());
        if (std::holds_alternative<failure>(next)) {
          return roots.in_home(target.native()) ? home_failure(at.shown)
                                                : outside_failure(at.shown);
        }
        auto shown = at.shown;
        at = std::get<located>(next);
        at.shown = shown;
        continue;
      }
      if (S_ISDIR(st.st_mode)) return io_failure(at.shown, EISDIR);
      if (!S_ISREG(st.st_mode))
        return failure{invalid_request, "path `" + at.shown + "` is not a regular file"};
    }
    auto fill = [&](int fd) { return detail::write_all(fd, *data); };
    if (int err = replace_file(p.dir.get(), p.name, fill)) return io_failure(at.shown, err);
    return json::object();
  }
  return io_failure(at.shown, ELOOP);
}

}  // namespace parley::files
