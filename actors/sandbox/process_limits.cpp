#include "actors/sandbox/process_limits.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace parley::sandbox {

namespace {

constexpr const char* cgroup_prefix = "parley-sandbox-";

/// The directory of the caller's own pids cgroup, or "" when none is usable.
std::string own_pids_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::string v2_path;
  bool have_v2 = false;
  while (std::getline(in, line)) {
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    auto controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    auto path = line.substr(second + 1);
    if (controllers.find(",pids,") != std::string::npos)
      return "/sys/fs/cgroup/pids" + (path == "/" ? std::string() : path);
    if (controllers == ",,") {
      have_v2 = true;
      v2_path = path;
    }
  }
  if (have_v2) {
    auto dir = "/sys/fs/cgroup" + (v2_path == "/" ? std::string() : v2_path);
    struct stat st {};
    if (stat((dir + "/cgroup.subtree_control").c_str(), &st) == 0)
      return dir;
  }
  return {};
}

bool write_text(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  auto n = write(fd, text.data(), text.size());
  auto saved = errno;
  close(fd);
  errno = saved;
  return n == static_cast<ssize_t>(text.size());
}

/// Removes parley-sandbox-<pid> cgroups whose launcher no longer runs (an
/// interrupted launcher cannot remove its own). Populated ones stay (EBUSY).
void remove_stale_cgroups(const std::string& parent) {
  DIR* dir = opendir(parent.c_str());
  if (!dir)
    return;
  while (auto* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.rfind(cgroup_prefix, 0) != 0)
      continue;
    auto pid = std::atol(name.c_str() + std::char_traits<char>::length(cgroup_prefix));
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      (void) rmdir((parent + "/" + name).c_str());
  }
  closedir(dir);
}

} // namespace

pids_cgroup::~pids_cgroup() {
  release();
}

outcome pids_cgroup::create(std::uint64_t max) {
  auto parent = own_pids_cgroup();
  if (parent.empty())
    return failure{"no pids cgroup found in /proc/self/cgroup", ENOENT};
  remove_stale_cgroups(parent);
  auto dir = parent + "/" + cgroup_prefix + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return failed("create cgroup " + dir);
  dir_ = dir;
  if (!write_text(dir + "/pids.max", std::to_string(max))) {
    auto err = failed("set " + dir + "/pids.max");
    release();
    return err;
  }
  return std::nullopt;
}

outcome pids_cgroup::join(pid_t pid) const {
  if (!write_text(dir_ + "/cgroup.procs", std::to_string(pid)))
    return failed("move the command into " + dir_);
  return std::nullopt;
}

void pids_cgroup::release() {
  if (dir_.empty())
    return;
  // The kernel may still hold the exiting tasks for a moment.
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (rmdir(dir_.c_str()) == 0 || errno != EBUSY)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  dir_.clear();
}

outcome apply_rlimits(const limits& x, bool nproc_fallback) {
  auto set = [](int resource, rlim_t soft, rlim_t hard, const char* what) -> outcome {
    rlimit limit{soft, hard};
    if (setrlimit(resource, &limit) != 0)
      return failed(what);
    return std::nullopt;
  };
  if (x.max_memory)
    if (auto err = set(RLIMIT_AS, *x.max_memory, *x.max_memory, "set RLIMIT_AS"))
      return err;
  if (x.max_cpu)
    if (auto err = set(RLIMIT_CPU, *x.max_cpu, *x.max_cpu + 1, "set RLIMIT_CPU"))
      return err;
  if (x.max_file_size)
    if (auto err = set(RLIMIT_FSIZE, *x.max_file_size, *x.max_file_size, "set RLIMIT_FSIZE"))
      return err;
  if (nproc_fallback && x.max_processes)
    if (auto err = set(RLIMIT_NPROC, *x.max_processes, *x.max_processes, "set RLIMIT_NPROC"))
      return err;
  return std::nullopt;
}

} // namespace parley::sandbox
