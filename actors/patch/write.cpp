// Applying planned changes: all files or none, each write beneath its root.

#include "actors/patch/apply_patch.hpp"
#include "actors/patch/beneath.hpp"
#include "actors/patch/detail.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace parley::patch {

// -- apply --------------------------------------------------------------------
//
// The all-or-nothing sequence:
//   1. check  every file still holds what plan() read (and new paths are free);
//   2. stage  each new content in a temp file next to its target, fsync'ed,
//             with the original's permissions; hard-link (or copy) each file
//             that will be replaced or deleted to a backup next to it;
//   3. commit in patch order: rename each temp over its target (new files
//             with RENAME_NOREPLACE, so a file that appeared meanwhile is not
//             clobbered), unlink each deleted or moved-away file;
//   4. finish: drop the backups, fsync the directories.
// A failure in 1 or 2 removes what was staged: nothing visible changed. A
// failure in 3 undoes the committed steps in reverse (backups renamed back,
// new files unlinked), then cleans up as in 2.
//
// What remains: the commit is a sequence of renames, not one. If the process
// or machine dies in the middle of step 3, some files are new and others old,
// and the temp and backup files (".<name>.parley-<pid>-<n>.tmp/.bak", next
// to their targets) stay behind; the backups hold the old contents for manual
// recovery. Also, a file modified by someone else between check and commit
// (a few system calls apart) is overwritten.
namespace {

namespace fs = std::filesystem;
using detail::describe;
using detail::read_fd;
using detail::write_all;

struct step {
  std::string target;                     // absolute, as planned (for the test seam)
  std::string root;                       // the root the write stays beneath; empty: none
  std::string dir_path;                   // target's directory, beneath `root`
  std::string name;                       // target's name in that directory
  beneath::unique_fd dir;                 // that directory, once opened beneath the root
  bool write = false;                     // rename a temp over target, else unlink target
  const std::string* content = nullptr;   // write: what to write
  const std::string* expected = nullptr;  // target exists: what it must still hold
  std::string shown;                      // the path as written, for messages
  mode_t mode = 0666;                     // write: permissions (umask applies when new)
  bool keep_mode = false;                 // write: take `mode` as is (the original's)
  std::string temp;                       // staged content (a name in `dir`), until committed
  std::string backup;                     // the original (a name in `dir`), until finished
  bool committed = false;
};

// `target` as planned, `root` and `below` (the path beneath it) from plan();
// without them (a change not made by plan()) the write is unrestricted.
step step_for(const std::string& target, const std::string& root, const std::string& below) {
  step s;
  s.target = target;
  s.root = root;
  auto rel = fs::path(below.empty() ? fs::path(target).relative_path().native() : below);
  s.dir_path = rel.parent_path().native();
  s.name = rel.filename().native();
  return s;
}

std::atomic<unsigned> name_counter{0};

std::string sibling_name(const std::string& name, const char* suffix) {
  return "." + name.substr(0, 100) + ".parley-" + std::to_string(::getpid()) + "-"
         + std::to_string(name_counter.fetch_add(1)) + suffix;
}

// Why a directory could not be opened beneath its root, for messages.
std::string describe_open(const step& s, int err) {
  if (!s.root.empty() && (err == EXDEV || err == ELOOP || err == ENOTDIR))
    return "it leads outside the writable root " + s.root;
  return describe(err);
}

class transaction {
 public:
  transaction(std::vector<step> steps, const detail::fault_injector& inject)
      : steps_(std::move(steps)), inject_(inject) {}

  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  // Whatever happened, no temp, backup or directory of ours stays behind.
  ~transaction() { discard(); }

  status run() {
    for (auto& s : steps_)
      if (auto err = check(s)) return *err;
    for (auto& s : steps_) {
      std::optional<error> err;
      if (s.write) err = stage(s);
      if (!err && s.expected) err = back_up(s);
      if (err) return *err;
    }
    for (auto& s : steps_)
      if (auto err = commit(s)) return roll_back(*err);
    finish();
    return std::monostate{};
  }

 private:
  bool fault(const char* what, const std::string& path) {
    if (!inject_ || !inject_(what, path)) return false;
    errno = EIO;
    return true;
  }

  std::optional<error> check(step& s) {
    s.dir = beneath::open_dir(s.root, s.dir_path);
    if (!s.dir) {
      int err = errno;
      if (!s.expected && err == ENOENT) return std::nullopt;  // stage() creates it
      return error{"cannot apply the patch: " + s.shown + ": " + describe_open(s, err)};
    }
    struct stat st {};
    if (!s.expected) {
      if (::fstatat(s.dir.get(), s.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        return error{"cannot create " + s.shown + ": it now exists"};
      if (errno != ENOENT) return error{"cannot check " + s.shown + ": " + describe(errno)};
      return std::nullopt;
    }
    int err = 0;
    auto now = read_fd(::openat(s.dir.get(), s.name.c_str(), O_RDONLY | O_CLOEXEC), err);
    if (!now) return error{"cannot apply the patch: " + s.shown + ": " + describe(err)};
    if (*now != *s.expected)
      return error{"cannot apply the patch: " + s.shown + " changed since the patch was planned"};
    if (s.write && ::fstatat(s.dir.get(), s.name.c_str(), &st, 0) == 0) {
      s.mode = st.st_mode & 07777;
      s.keep_mode = true;
    }
    return std::nullopt;
  }

  std::optional<error> make_parents(step& s) {
    if (s.dir) return std::nullopt;
    auto prefix = s.root.empty() ? std::string("/") : s.root + "/";
    s.dir = beneath::make_dirs(s.root, s.dir_path, created_dirs_,
                               [&](const std::string& rel) { return fault("mkdir", prefix + rel); });
    if (s.dir) return std::nullopt;
    return error{"cannot create the directory of " + s.shown + ": " + describe_open(s, errno)
                 + "; nothing was changed"};
  }

  std::optional<error> stage(step& s) {
    if (auto err = make_parents(s)) return err;
    auto fail = [&](int err) {
      return error{"cannot write " + s.shown + ": " + describe(err) + "; nothing was changed"};
    };
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      auto name = sibling_name(s.name, ".tmp");
      if (fault("write", s.target)) return fail(errno);
      fd = ::openat(s.dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                    s.keep_mode ? mode_t{0600} : s.mode);
      if (fd >= 0)
        s.temp = name;
      else if (errno != EEXIST)
        return fail(errno);
    }
    if (fd < 0) return fail(EEXIST);
    bool ok = (!s.keep_mode || ::fchmod(fd, s.mode) == 0) && write_all(fd, *s.content)
              && ::fsync(fd) == 0;
    int err = errno;
    if (::close(fd) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (!ok) return fail(err);
    return std::nullopt;
  }

  // A hard link keeps the original (inode, permissions, even a symlink) at no
  // cost; where links are not supported, a copy of the checked content does.
  std::optional<error> back_up(step& s) {
    auto fail = [&](int err) {
      return error{"cannot back up " + s.shown + ": " + describe(err) + "; nothing was changed"};
    };
    int dir = s.dir.get();
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto name = sibling_name(s.name, ".bak");
      if (fault("backup", s.target)) return fail(errno);
      if (::linkat(dir, s.name.c_str(), dir, name.c_str(), 0) == 0) {
        s.backup = name;
        return std::nullopt;
      }
      if (errno == EEXIST) continue;
      if (errno != EPERM && errno != ENOTSUP && errno != EXDEV && errno != EMLINK
          && errno != ENOSYS)
        return fail(errno);
      int fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                        0600);
      if (fd < 0 && errno == EEXIST) continue;
      if (fd < 0) return fail(errno);
      s.backup = name;
      struct stat st {};
      bool ok = ::fstatat(dir, s.name.c_str(), &st, 0) == 0
                && ::fchmod(fd, st.st_mode & 07777) == 0 && write_all(fd, *s.expected)
                && ::fsync(fd) == 0;
      int err = errno;
      ::close(fd);
      if (!ok) return fail(err);
      return std::nullopt;
    }
    return fail(EEXIST);
  }

  std::optional<error> commit(step& s) {
    int rc = -1;
    int dir = s.dir.get();
    if (fault("commit", s.target)) {
      rc = -1;
    } else if (!s.write) {
      rc = ::unlinkat(dir, s.name.c_str(), 0);
    } else if (s.expected) {
      rc = ::renameat(dir, s.temp.c_str(), dir, s.name.c_str());
    } else {
#ifdef RENAME_NOREPLACE
      rc = ::renameat2(dir, s.temp.c_str(), dir, s.name.c_str(), RENAME_NOREPLACE);
      if (rc != 0 && (errno == EINVAL || errno == ENOSYS))  // file system without it
        rc = ::renameat(dir, s.temp.c_str(), dir, s.name.c_str());
#else
      rc = ::renameat(dir, s.temp.c_str(), dir, s.name.c_str());
#endif
    }
    if (rc != 0)
      return error{"cannot " + std::string(s.write ? "write " : "delete ") + s.shown + ": "
                   + describe(errno)};
    s.committed = true;
    if (s.write) s.temp.clear();  // it is the target now
    return std::nullopt;
  }

  status roll_back(const error& cause) {
    std::string failures;
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      if (!it->committed) continue;
      int dir = it->dir.get();
      if (it->backup.empty()) {
        if (::unlinkat(dir, it->name.c_str(), 0) != 0)
          failures += "; could not remove " + it->shown + ": " + describe(errno);
        continue;
      }
      if (::renameat(dir, it->backup.c_str(), dir, it->name.c_str()) != 0) {
        // Keep the backup: it is now the only copy of the original.
        failures += "; could not restore " + it->shown + " (its original is in "
                    + (fs::path(it->target).parent_path() / it->backup).native()
                    + "): " + describe(errno);
      }
      it->backup.clear();
    }
    if (failures.empty()) return error{cause.message + "; nothing was changed"};
    return error{cause.message + failures};
  }

  void finish() {
    std::set<std::pair<dev_t, ino_t>> synced;
    for (auto& s : steps_) {
      if (!s.backup.empty()) ::unlinkat(s.dir.get(), s.backup.c_str(), 0);
      s.backup.clear();
      // Make the renames and unlinks durable; best effort, they have happened.
      struct stat st {};
      if (::fstat(s.dir.get(), &st) == 0 && synced.emplace(st.st_dev, st.st_ino).second)
        ::fsync(s.dir.get());
    }
    created_dirs_.clear();
  }

  void discard() {
    for (auto& s : steps_) {
      if (!s.temp.empty()) ::unlinkat(s.dir.get(), s.temp.c_str(), 0);
      if (!s.backup.empty()) ::unlinkat(s.dir.get(), s.backup.c_str(), 0);
    }
    for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it)
      ::unlinkat(it->parent.get(), it->name.c_str(), AT_REMOVEDIR);
  }

  std::vector<step> steps_;
  const detail::fault_injector& inject_;
  std::vector<beneath::created_dir> created_dirs_;  // in creation order (parents first)
};

}  // namespace

status detail::apply(const std::vector<file_change>& changes, const fault_injector& inject) {
  std::vector<step> steps;
  for (const auto& c : changes) {
    if (c.resolved_path.empty() || fs::path(c.resolved_path).is_relative())
      return error{"cannot apply " + c.path + ": the change was not planned"};
    auto s = step_for(c.resolved_path, c.root, c.beneath_root);
    s.shown = c.path;
    switch (c.kind) {
      case change_kind::add:
        s.write = true;
        s.content = &c.new_content;
        steps.push_back(std::move(s));
        break;
      case change_kind::remove:
        s.expected = &c.old_content;
        steps.push_back(std::move(s));
        break;
      case change_kind::update:
        if (c.resolved_move_to.empty()) {
          s.write = true;
          s.content = &c.new_content;
          s.expected = &c.old_content;
          steps.push_back(std::move(s));
          break;
        }
        {
          auto to = step_for(c.resolved_move_to, c.move_root, c.move_beneath_root);
          to.shown = c.move_to.value_or(c.resolved_move_to);
          to.write = true;
          to.content = &c.new_content;
          // The moved file keeps the original's permissions.
          struct stat st {};
          if (::stat(c.resolved_path.c_str(), &st) == 0) {
            to.mode = st.st_mode & 07777;
            to.keep_mode = true;
          }
          steps.push_back(std::move(to));
          s.expected = &c.old_content;
          steps.push_back(std::move(s));
          break;
        }
    }
  }
  return transaction(std::move(steps), inject).run();
}

}  // namespace parley::patch
