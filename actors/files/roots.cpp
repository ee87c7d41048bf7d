#include "actors/files/roots.hpp"

#include "actors/files/detail.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <filesystem>
#include <system_error>

namespace parley::files {
namespace {

namespace fs = std::filesystem;

int openat2_beneath(int root_fd, const char* relative, int flags) {
  open_how how{};
  how.flags = static_cast<__u64>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    auto fd = ::syscall(SYS_openat2, root_fd, relative, &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != EAGAIN && errno != EINTR) return -1;
  }
}

}  // namespace

std::string os_error(int err) {
  return std::error_code(err, std::generic_category()).message() + " (os error "
         + std::to_string(err) + ")";
}

failure io_failure(const std::string& shown, int err) {
  return {internal_error, "`" + shown + "`: " + os_error(err), err};
}

failure outside_failure(const std::string& shown) {
  return {invalid_request, "`" + shown
                               + "` leads outside the roots this connection may use (a symbolic "
                                 "link or mount that leaves them)"};
}

failure home_failure(const std::string& shown) {
  return {invalid_request, "`" + shown + "` is in parley's home, which no client may reach"};
}

std::optional<std::string> normal_path(const std::string& path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  auto s = fs::path(path).lexically_normal().native();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool is_within(const std::string& inner, const std::string& outer) {
  if (outer == "/") return !inner.empty() && inner.front() == '/';
  if (inner.size() < outer.size() || inner.compare(0, outer.size(), outer) != 0) return false;
  return inner.size() == outer.size() || inner[outer.size()] == '/';
}

void root_set::add(const std::string& dir) {
  auto normal = normal_path(dir);
  if (!normal) return;
  std::error_code ec;
  auto real = fs::weakly_canonical(*normal, ec);
  for (const auto& form : {*normal, ec ? *normal : real.native()}) {
    if (in_home(form)) continue;
    if (std::find(roots_.begin(), roots_.end(), form) == roots_.end()) roots_.push_back(form);
  }
}

void root_set::set_home(std::string home) {
  home_.clear();
  auto normal = normal_path(home);
  if (!normal) return;
  home_.push_back(*normal);
  std::error_code ec;
  auto real = fs::weakly_canonical(*normal, ec);
  if (!ec && real.native() != *normal) home_.push_back(real.native());
  // A root added before the home was known may lie inside it.
  roots_.erase(std::remove_if(roots_.begin(), roots_.end(),
                              [this](const std::string& r) { return in_home(r); }),
               roots_.end());
}

bool root_set::in_home(const std::string& path) const {
  return std::any_of(home_.begin(), home_.end(),
                     [&](const std::string& h) { return is_within(path, h); });
}

bool root_set::holds_home(const std::string& path) const {
  return std::any_of(home_.begin(), home_.end(),
                     [&](const std::string& h) { return is_within(h, path); });
}

std::variant<located, failure> root_set::locate(const std::string& path) const {
  auto normal = normal_path(path);
  if (!normal)
    return failure{invalid_request, "Invalid request: `" + path + "` is not an absolute path"};
  if (in_home(*normal)) return home_failure(*normal);
  const std::string* best = nullptr;
  for (const auto& root : roots_)
    if (is_within(*normal, root) && (!best || root.size() > best->size())) best = &root;
  if (!best)
    return failure{invalid_request,
                   "`" + *normal
                       + "` is outside the roots this connection may use (the cwds and writable "
                         "roots of its threads, and the server's cwd)"};
  std::string relative = normal->size() == best->size() ? std::string{}
                         : *best == "/"                 ? normal->substr(1)
                                                        : normal->substr(best->size() + 1);
  return located{*best, std::move(relative), *normal};
}

std::string path_of_fd(int fd) {
  char buf[PATH_MAX + 1];
  auto link = "/proc/self/fd/" + std::to_string(fd);
  auto n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
}

unique_fd open_beneath(const located& at, int flags) {
  unique_fd root(::open(at.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return root;
  const char* rel = at.relative.empty() ? "." : at.relative.c_str();
  int fd = openat2_beneath(root.get(), rel, flags | O_CLOEXEC);
  if (fd >= 0 || errno != ENOSYS) return unique_fd(fd);
  // No openat2: the directories one O_NOFOLLOW component at a time (patch's
  // walk), then the last name without following it.
  auto parent = fs::path(at.relative).parent_path().native();
  auto name = fs::path(at.relative).filename().native();
  auto dir = patch::beneath::open_dir(at.root, parent);
  if (!dir) return dir;
  if (name.empty()) return dir;
  return unique_fd(::openat(dir.get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
}

std::variant<unique_fd, failure> open_confined(const root_set& roots, const located& at,
                                               int flags) {
  auto fd = open_beneath(at, flags);
  int first_errno = errno;
  if (!fd && (errno == EXDEV || errno == ELOOP) && (flags & O_NOFOLLOW) == 0) {
    // A symlink out of this root may land in another one: resolve it and try
    // again beneath that root (still beneath a root, whatever raced).
    std::error_code ec;
    auto real = fs::weakly_canonical(detail::join(at.root, at.relative), ec);
    if (!ec) {
      auto other = roots.locate(real.native());
      if (auto* o = std::get_if<located>(&other);
          o && (o->root != at.root || o->relative != at.relative)) {
        fd = open_beneath(*o, flags);
        first_errno = errno;
      } else if (auto* f = std::get_if<failure>(&other); f && roots.in_home(real.native())) {
        return home_failure(at.shown);
      }
    }
    if (!fd && first_errno == ELOOP) first_errno = EXDEV;
  }
  if (!fd) {
    int err = first_errno;
    if (err == EXDEV) return outside_failure(at.shown);
    if (err == ELOOP && (flags & O_NOFOLLOW) != 0)
      return failure{invalid_request, "`" + at.shown + "` is a symbolic link"};
    return io_failure(at.shown, err);
  }
  auto real = path_of_fd(fd.get());
  if (real.empty() || roots.in_home(real)) return home_failure(at.shown);
  return fd;
}

std::variant<parent_dir, failure> open_parent(const root_set& roots, const located& at) {
  if (at.relative.empty())
    return failure{invalid_request, "`" + at.shown + "` is a root of this connection"};
  auto rel = fs::path(at.relative);
  located up{at.root, rel.parent_path().native(), fs::path(at.shown).parent_path().native()};
  auto dir = open_confined(roots, up, O_RDONLY | O_DIRECTORY);
  if (auto* f = std::get_if<failure>(&dir)) return *f;
  parent_dir p;
  p.dir = std::move(std::get<unique_fd>(dir));
  p.name = rel.filename().native();
  p.real = path_of_fd(p.dir.get());
  if (roots.in_home(detail::join(p.real, p.name))) return home_failure(at.shown);
  return p;
}

}  // namespace parley::files
