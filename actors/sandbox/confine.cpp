#include "actors/sandbox/confine.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/sandbox/mount_apply.hpp"
#include "actors/sandbox/mount_plan.hpp"
#include "actors/sandbox/process_limits.hpp"
#include "actors/sandbox/seccomp_filter.hpp"

namespace parley::sandbox {

namespace {

void report(const failure& x) {
  auto line = describe(x) + "\n";
  (void) !write(STDERR_FILENO, line.data(), line.size());
}

/// 128+signal for a signal, as a shell reports it.
int exit_status_of(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return setup_failed;
}

/// Waits for `pid`, retrying on EINTR.
int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return setup_failed << 8;
  return status;
}

/// Execs the command; on failure reports it and exits as a shell would
/// (127: not found, 126: found but not runnable).
/// The command's argv, built before the limits are applied: once RLIMIT_AS
/// is low, nothing between it and exec may need memory (an ASan build of
/// the launcher could not map any).
std::vector<char*> argv_of(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const auto& arg : command)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  return argv;
}

[[noreturn]] void exec_command(std::vector<char*>& argv) {
  execvp(argv[0], argv.data());
  auto code = errno == ENOENT ? 127 : 126;
  report(failed(std::string{"exec "} + argv[0]));
  _exit(code);
}

entry_kind probe_path(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0)
    return entry_kind::missing;
  if (S_ISDIR(st.st_mode))
    return entry_kind::directory;
  if (S_ISLNK(st.st_mode))
    return entry_kind::symlink;
  return entry_kind::other;
}

/// The plan's paths without symlinks, `.` or `..`: a mount over the real
/// place covers every way to reach it. Paths that do not exist are dropped
/// (there is nothing to write, show or hide).
void canonical_paths(std::vector<std::string>& paths) {
  std::vector<std::string> kept;
  for (const auto& path : paths) {
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved))
      kept.emplace_back(resolved);
  }
  paths = std::move(kept);
}

std::vector<std::string> root_entries() {
  std::vector<std::string> names;
  if (DIR* dir = opendir("/")) {
    while (auto* entry = readdir(dir))
      names.emplace_back(entry->d_name);
    closedir(dir);
  }
  return names;
}

outcome write_file(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return failed(std::string("open ") + path);
  auto n = write(fd, text.data(), text.size());
  auto saved = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    errno = saved;
    return failed(std::string("write ") + path);
  }
  return std::nullopt;
}

/// The caller's uid and gid, mapped to themselves (so files keep their
/// owners); setgroups is denied, which an unprivileged map requires.
outcome map_identity(uid_t uid, gid_t gid) {
  if (auto err = write_file("/proc/self/setgroups", "deny"))
    return err;
  if (auto err = write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n"))
    return err;
  return write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n");
}

/// No capability left anywhere (permitted, effective, inheritable, ambient,
/// bounding), root gets none back at exec (SECBIT_NOROOT), no new
/// privileges through setuid files.
outcome drop_capabilities() {
  if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP
                                   | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED
                                   | SECBIT_NO_CAP_AMBIENT_RAISE
                                   | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)
      != 0)
    return failed("set securebits");
  for (unsigned long cap = 0; cap <= 63; ++cap)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      return failed("drop the capability bounding set");
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    return failed("clear the ambient capabilities");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capset, &header, data) != 0)
    return failed("drop the capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return failed("set no_new_privs");
  return std::nullopt;
}

/// What the init process needs, prepared by the launcher.
struct init_setup {
  const plan* x;
  mount_layout layout;
  std::string cwd;
  uid_t uid;
  gid_t gid;
  /// Read end of the pipe the launcher closes once the init is in its
  /// cgroup; -1 without a cgroup.
  int go_fd;
  /// RLIMIT_NPROC instead of a cgroup.
  bool nproc_fallback;
  /// --check: set everything up, then exit 0 instead of running anything.
  bool probe_only;
};

/// The sandbox's init (PID 1 of its namespace): sets up the mounts, drops
/// every capability, runs the command and reaps everything until the
/// command exits; its exit then kills whatever is left in the namespace.
[[noreturn]] void run_init(const init_setup& s) {
  (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (s.go_fd >= 0) {
    char byte = 0;
    if (read(s.go_fd, &byte, 1) != 1)
      _exit(setup_failed); // the launcher failed or died; it reported why
    close(s.go_fd);
  }
  auto fail = [](const failure& err) {
    report(err);
    _exit(setup_failed);
  };
  if (auto err = map_identity(s.uid, s.gid))
    fail(*err);
  if (auto err = apply_mounts(s.layout, s.cwd))
    fail(*err);
  if (auto err = drop_capabilities())
    fail(*err);
  if (s.probe_only) {
    if (auto err = install_seccomp(false))
      fail(*err);
    _exit(0);
  }
  pid_t command = fork();
  if (command < 0)
    fail(failed("fork the command"));
  if (command == 0) {
    // The filter and the argv first: they allocate, which a low RLIMIT_AS
    // could refuse.
    if (auto err = install_seccomp(s.x->network))
      fail(*err);
    auto argv = argv_of(s.x->command);
    if (auto err = apply_rlimits(s.x->limits, s.nproc_fallback))
      fail(*err);
    // Only stdin, stdout and stderr are handed over: any other descriptor
    // could be a directory outside the sandbox.
    (void) close_range(3, ~0U, 0);
    exec_command(argv);
  }
  for (;;) {
    int status = 0;
    pid_t reaped = waitpid(-1, &status, 0);
    if (reaped == command)
      _exit(exit_status_of(status));
    if (reaped < 0 && errno != EINTR)
      _exit(setup_failed);
  }
}

/// danger-full-access: the limits only.
int run_unconfined(const plan& x) {
  auto argv = argv_of(x.command);
  if (!x.limits.max_processes) {
    if (auto err = apply_rlimits(x.limits, false)) {
      report(*err);
      return setup_failed;
    }
    exec_command(argv);
  }
  pids_cgroup cgroup;
  bool fallback = false;
  if (auto err = cgroup.create(*x.limits.max_processes)) {
    if (geteuid() == 0) {
      report(*err);
      return setup_failed;
    }
    fallback = true;
  }
  pid_t child = fork();
  if (child < 0) {
    report(failed("fork"));
    return setup_failed;
  }
  if (child == 0) {
    (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (cgroup.active())
      if (auto err = cgroup.join(0)) {
        report(*err);
        _exit(setup_failed);
      }
    if (auto err = apply_rlimits(x.limits, fallback)) {
      report(*err);
      _exit(setup_failed);
    }
    exec_command(argv);
  }
  auto status = wait_for(child);
  cgroup.release();
  return exit_status_of(status);
}

int run_sandboxed(const plan& given, bool probe_only) {
  plan x = given;
  canonical_paths(x.writable);
  canonical_paths(x.readable);
  canonical_paths(x.hidden);
  init_setup setup{&x, {}, {}, geteuid(), getegid(), -1, false, probe_only};
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) {
    report(failed("getcwd"));
    return setup_failed;
  }
  setup.cwd = cwd;
  setup.layout = make_layout(x, probe_path, x.isolate_reads ? root_entries()
                                                            : std::vector<std::string>{});
  if (!setup.layout.error.empty()) {
    report(failure{setup.layout.error, 0});
    return setup_failed;
  }
  pids_cgroup cgroup;
  if (x.limits.max_processes) {
    // One more than asked: the sandbox's init counts too.
    if (auto err = cgroup.create(*x.limits.max_processes + 1)) {
      if (geteuid() == 0) {
        report(*err);
        return setup_failed;
      }
      setup.nproc_fallback = true;
    }
  }
  int go[2] = {-1, -1};
  if (cgroup.active() && pipe2(go, O_CLOEXEC) != 0) {
    report(failed("pipe"));
    return setup_failed;
  }
  setup.go_fd = go[0];
  unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | SIGCHLD;
  if (!x.network)
    flags |= CLONE_NEWNET;
  // A fork into the new namespaces; the child is PID 1 of its namespace.
  auto init = static_cast<pid_t>(syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr));
  if (init < 0) {
    report(failed("create the namespaces (user, mount, pid, net)"));
    return setup_failed;
  }
  if (init == 0) {
    if (go[1] >= 0)
      close(go[1]);
    run_init(setup);
  }
  if (cgroup.active()) {
    close(go[0]);
    if (auto err = cgroup.join(init)) {
      report(*err);
      kill(init, SIGKILL);
      wait_for(init);
      return setup_failed;
    }
    char byte = 1;
    (void) !write(go[1], &byte, 1);
    close(go[1]);
  }
  auto status = wait_for(init);
  cgroup.release();
  return exit_status_of(status);
}

} // namespace

int run_confined(const plan& x) {
  if (x.sandbox_mode == mode::danger_full_access)
    return run_unconfined(x);
  return run_sandboxed(x, false);
}

int run_check() {
  std::string reason;
  auto capture = [&](const plan& x) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0)
      return false;
    pid_t child = fork();
    if (child == 0) {
      dup2(out[1], STDERR_FILENO);
      _exit(run_sandboxed(x, true));
    }
    close(out[1]);
    char buffer[512];
    ssize_t n;
    while ((n = read(out[0], buffer, sizeof buffer)) > 0)
      reason.append(buffer, static_cast<size_t>(n));
    close(out[0]);
    return child > 0 && exit_status_of(wait_for(child)) == 0;
  };
  plan probe;
  probe.sandbox_mode = mode::read_only;
  bool filesystem = capture(probe);
  bool network = filesystem; // the same probe: a network namespace and seccomp
  bool processes = true;
  if (geteuid() == 0) {
    pids_cgroup cgroup;
    if (auto err = cgroup.create(1)) {
      processes = false;
      reason += describe(*err) + " (--max-processes cannot bind root)\n";
    }
  }
  while (!reason.empty() && reason.back() == '\n')
    reason.pop_back();
  std::string escaped;
  for (char c : reason) {
    if (c == '"' || c == '\\')
      escaped += '\\';
    escaped += c == '\n' ? ' ' : c;
  }
  std::printf("{\"filesystem\":%s,\"network\":%s,\"processes\":%s,\"reason\":\"%s\"}\n",
              filesystem ? "true" : "false", network ? "true" : "false",
              processes ? "true" : "false", escaped.c_str());
  std::fflush(stdout);
  return filesystem && network ? 0 : 1;
}

} // namespace parley::sandbox
