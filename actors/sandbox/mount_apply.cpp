#include "actors/sandbox/mount_apply.hpp"

#include <algorithm>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace parley::sandbox {

namespace {

/// The character devices a command finds in its /dev.
constexpr const char* dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

/// A detached copy of the mount tree at `path` (an fd; -1 on failure).
int clone_mount_tree(const std::string& path, bool recursive) {
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
  if (recursive)
    flags |= AT_RECURSIVE;
  return open_tree(AT_FDCWD, path.c_str(), flags);
}

/// Attaches a detached tree over `path` and closes its fd.
outcome attach_tree(int tree, const std::string& path) {
  int rc = move_mount(tree, "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH);
  auto saved = errno;
  close(tree);
  if (rc != 0) {
    errno = saved;
    return failed("bind over " + path);
  }
  return std::nullopt;
}

outcome set_mount_attr(const std::string& path, std::uint64_t set, bool recursive) {
  mount_attr attr{};
  attr.attr_set = set;
  if (mount_setattr(AT_FDCWD, path.c_str(), recursive ? AT_RECURSIVE : 0, &attr, sizeof attr)
      != 0)
    return failed("make " + path + " read-only");
  return std::nullopt;
}

/// mkdir -p of `path` (absolute); existing components are fine.
outcome make_directories(const std::string& path) {
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/')
      continue;
    auto prefix = path.substr(0, at);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return failed("create mount point " + prefix);
  }
  return std::nullopt;
}

outcome make_empty_file(const std::string& path, mode_t perms) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, perms);
  if (fd < 0)
    return failed("create " + path);
  close(fd);
  return std::nullopt;
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

/// Sources for --hide and --isolate-reads: detached copies of an empty
/// directory and an empty file, both mode 000 and already unlinked.
struct hide_sources {
  std::vector<int> dirs;
  std::vector<int> files;
};

/// A tmpfs on /dev with only the usual character devices (bound from the
/// host's, cloned before everything became nodev), a private devpts and
/// /dev/shm. The hide sources are made there and unlinked.
outcome build_dev(const std::vector<std::pair<std::string, int>>& devices, size_t dir_count,
                  size_t file_count, hide_sources& sources) {
  if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m") != 0)
    return failed("mount tmpfs on /dev");
  for (const auto& [name, tree] : devices) {
    auto path = "/dev/" + name;
    if (auto err = make_empty_file(path, 0666))
      return err;
    if (auto err = attach_tree(tree, path))
      return err;
    if (auto err = set_mount_attr(path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, false))
      return err;
  }
  const std::pair<const char*, const char*> links[] = {
    {"/proc/self/fd", "/dev/fd"},         {"/proc/self/fd/0", "/dev/stdin"},
    {"/proc/self/fd/1", "/dev/stdout"},   {"/proc/self/fd/2", "/dev/stderr"},
    {"pts/ptmx", "/dev/ptmx"},
  };
  for (const auto& [target, path] : links)
    if (symlink(target, path) != 0)
      return failed(std::string("create ") + path);
  if (mkdir("/dev/pts", 0755) != 0 || mkdir("/dev/shm", 01777) != 0)
    return failed("create /dev/pts and /dev/shm");
  // Optional comforts: a private pty instance and shared memory that dies
  // with the sandbox. Neither reaches the host, so failing is not fatal.
  (void) mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
               "newinstance,ptmxmode=0666,mode=0620");
  (void) mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m");
  if (dir_count + file_count > 0) {
    // A mount whose root was unlinked cannot be attached again, so the
    // sources sit in a tmpfs of their own that is detached once cloned.
    const char* scratch = "/dev/.parley-sandbox";
    if (mkdir(scratch, 0) != 0
        || mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0,size=4k")
             != 0)
      return failed("mount a tmpfs for --hide");
    const std::string empty_dir = std::string(scratch) + "/d";
    const std::string empty_file = std::string(scratch) + "/f";
    if (mkdir(empty_dir.c_str(), 0) != 0)
      return failed("create an empty directory for --hide");
    if (auto err = make_empty_file(empty_file, 0))
      return err;
    for (size_t i = 0; i < dir_count + file_count; ++i) {
      bool dir = i < dir_count;
      int tree = clone_mount_tree(dir ? empty_dir : empty_file, false);
      if (tree < 0)
        return failed("clone the empty sources for --hide");
      (dir ? sources.dirs : sources.files).push_back(tree);
    }
    if (umount2(scratch, MNT_DETACH) != 0 || rmdir(scratch) != 0)
      return failed("remove the tmpfs for --hide");
  }
  return set_mount_attr("/dev", MOUNT_ATTR_RDONLY, false);
}

outcome hide_with(std::vector<int>& sources, const std::string& path) {
  int tree = sources.back();
  sources.pop_back();
  if (!path_exists(path)) { // under a directory that isolate_reads covered
    close(tree);
    return std::nullopt;
  }
  if (auto err = attach_tree(tree, path))
    return err;
  return set_mount_attr(path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
}

} // namespace

outcome apply_mounts(const mount_layout& layout, const std::string& cwd) {
  // Nothing of ours propagates to the host, nothing of the host's to us.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return failed("make the mounts private");
  // Copies taken before everything turns read-only keep their own flags
  // (a read-only mount inside a writable root stays read-only).
  std::vector<std::pair<std::string, int>> writable_trees;
  for (const auto& root : layout.writable) {
    int tree = clone_mount_tree(root, true);
    if (tree < 0)
      return failed("clone writable root " + root);
    writable_trees.emplace_back(root, tree);
  }
  std::vector<std::pair<std::string, int>> devices;
  for (const char* name : dev_nodes) {
    int tree = clone_mount_tree(std::string("/dev/") + name, false);
    if (tree >= 0)
      devices.emplace_back(name, tree);
    else if (errno != ENOENT)
      return failed(std::string("clone /dev/") + name);
  }
  if (auto err = set_mount_attr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                true))
    return err;
  // Readable roots are cloned now, read-only like everything else.
  std::vector<std::pair<std::string, int>> readable_trees;
  for (const auto& root : layout.readable) {
    int tree = clone_mount_tree(root, true);
    if (tree < 0)
      return failed("clone readable root " + root);
    readable_trees.emplace_back(root, tree);
  }
  hide_sources sources;
  if (auto err = build_dev(devices, layout.hide_dirs.size(),
                           layout.hide_files.size() + layout.isolate_files.size(), sources))
    return err;
  // --isolate-reads: an empty tmpfs over each non-system top-level
  // directory, with mount points for the roots shown again.
  std::vector<std::pair<std::string, int>> shown = writable_trees;
  shown.insert(shown.end(), readable_trees.begin(), readable_trees.end());
  std::sort(shown.begin(), shown.end(),
            [](const auto& a, const auto& b) { return a.first.size() < b.first.size(); });
  for (const auto& dir : layout.isolate_dirs) {
    if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0)
      return failed("cover " + dir);
    for (const auto& [root, tree] : shown)
      if (root != dir && is_within(root, dir))
        if (auto err = make_directories(root))
          return err;
    if (auto err = set_mount_attr(dir, MOUNT_ATTR_RDONLY, false))
      return err;
  }
  for (const auto& path : layout.isolate_files)
    if (auto err = hide_with(sources.files, path))
      return err;
  for (const auto& [root, tree] : shown)
    if (auto err = attach_tree(tree, root))
      return err;
  for (const auto& path : layout.protect) {
    int tree = clone_mount_tree(path, true);
    if (tree < 0)
      return failed("clone protected " + path);
    if (auto err = attach_tree(tree, path))
      return err;
    if (auto err = set_mount_attr(path, MOUNT_ATTR_RDONLY, true))
      return err;
  }
  for (const auto& path : layout.hide_dirs)
    if (auto err = hide_with(sources.dirs, path))
      return err;
  for (const auto& path : layout.hide_files)
    if (auto err = hide_with(sources.files, path))
      return err;
  // A procfs of the new PID namespace: /proc/<host pid>/root would
  // otherwise lead out of this mount namespace.
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return failed("mount a fresh /proc");
  if (mount("/proc/sys", "/proc/sys", nullptr, MS_BIND | MS_REC, nullptr) != 0)
    return failed("bind /proc/sys");
  if (auto err = set_mount_attr("/proc/sys", MOUNT_ATTR_RDONLY, true))
    return err;
  // The old working directory is the mount below the new ones.
  if (chdir(cwd.c_str()) != 0)
    return failed("enter the working directory " + cwd);
  return std::nullopt;
}

} // namespace parley::sandbox
