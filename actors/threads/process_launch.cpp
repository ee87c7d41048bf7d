#include "actors/threads/process_launch.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <stdlib.h>
#include <termios.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "actors/core/errors.hpp"

extern char** environ;

namespace parley {

namespace {

// The child's stdin as a memfd holding exactly `data`, rewound: the child
// reads it at its own pace and parley never waits on a pipe. -1 = none.
caf::expected<int> stdin_memfd(const std::optional<std::string>& data) {
  if (!data) return -1;
  int fd = ::memfd_create("parley-stdin", MFD_CLOEXEC);
  if (fd < 0) return make_error(errc::internal, std::string{"memfd_create: "} + std::strerror(errno));
  const char* p = data->data();
  size_t left = data->size();
  while (left > 0) {
    auto n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      auto err = std::string{"memfd write: "} + std::strerror(errno);
      ::close(fd);
      return make_error(errc::internal, std::move(err));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    auto err = std::string{"memfd lseek: "} + std::strerror(errno);
    ::close(fd);
    return make_error(errc::internal, std::move(err));
  }
  return fd;
}

}  // namespace

namespace {

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
}

caf::error os_error(const char* what) {
  return make_error(errc::internal, std::string{what} + ": " + std::strerror(errno));
}

/// A pseudo-terminal's master (close-on-exec from the start: other
/// spawner threads may be starting children meanwhile) and its slave's path.
caf::expected<std::pair<int, std::string>> open_pty(uint16_t rows, uint16_t cols) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return os_error("posix_openpt");
  char name[128];
  if (::grantpt(master) != 0 || ::unlockpt(master) != 0
      || ::ptsname_r(master, name, sizeof name) != 0) {
    auto err = os_error("pty setup");
    ::close(master);
    return err;
  }
  winsize ws{};
  ws.ws_row = rows;
  ws.ws_col = cols;
  ::ioctl(master, TIOCSWINSZ, &ws);
  return std::make_pair(master, std::string{name});
}

}  // namespace

caf::expected<launched> launch(const spawn_spec& spec) {
  if (spec.argv.empty()) return make_error(errc::internal, "empty argv");
  int master = -1;
  std::string slave;
  if (spec.pty) {
    auto pty = open_pty(spec.pty->first, spec.pty->second);
    if (!pty) return std::move(pty.error());
    master = pty->first;
    slave = std::move(pty->second);
  }
  auto in = spec.pty || spec.stdin_pipe ? caf::expected<int>{-1} : stdin_memfd(spec.stdin_data);
  if (!in) {
    close_all({master});
    return std::move(in.error());
  }
  int fds[2] = {-1, -1};
  int errs[2] = {-1, -1};
  int ins[2] = {-1, -1};
  if ((!spec.pty && ::pipe2(fds, O_CLOEXEC) != 0)
      || (!spec.pty && spec.separate_stderr && ::pipe2(errs, O_CLOEXEC) != 0)
      || (!spec.pty && spec.stdin_pipe && ::pipe2(ins, O_CLOEXEC) != 0)) {
    auto err = os_error("pipe");
    close_all({*in, master, fds[0], fds[1], errs[0], errs[1], ins[0], ins[1]});
    return err;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.pty) {
    // A new session (so a new process group too, led by the child); the
    // slave opened without O_NOCTTY becomes its controlling terminal.
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, slave.c_str(), O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&actions, STDIN_FILENO, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, STDIN_FILENO, STDERR_FILENO);
    flags |= POSIX_SPAWN_SETSID;
  } else {
    if (ins[0] >= 0)
      posix_spawn_file_actions_adddup2(&actions, ins[0], STDIN_FILENO);
    else if (*in >= 0)
      posix_spawn_file_actions_adddup2(&actions, *in, STDIN_FILENO);
    else
      posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    if (errs[1] >= 0)
      posix_spawn_file_actions_adddup2(&actions, errs[1], STDERR_FILENO);
    else if (spec.merge_stderr)
      posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    // A new process group (so interrupt kills the whole tree).
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  // Default signal dispositions (parley ignores SIGPIPE; commands must not
  // inherit that).
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, flags);
  std::vector<char*> argv;
  argv.reserve(spec.argv.size() + 1);
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The environment given, else parley's. argv[0] is still looked up in
  // parley's PATH (glibc's posix_spawnp), whatever the child's PATH is.
  std::vector<char*> envp;
  if (spec.env) {
    envp.reserve(spec.env->size() + 1);
    for (const auto& e : *spec.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(),
                          spec.env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_all({fds[1], errs[1], ins[0], *in});
  if (rc != 0) {
    close_all({fds[0], errs[0], ins[1], master});
    return make_error(errc::internal,
                      "cannot start " + spec.argv[0] + ": " + std::strerror(rc));
  }
  launched out;
  out.pid = pid;
  if (spec.pty) {
    out.out_fd = master;
    out.in_fd = ::fcntl(master, F_DUPFD_CLOEXEC, 0);
  } else {
    out.out_fd = fds[0];
    out.err_fd = errs[0];
    out.in_fd = ins[1];
  }
  return out;
}

}  // namespace parley
