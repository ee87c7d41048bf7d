#include "actors/threads/process_launch.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
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

caf::expected<launched> launch(const spawn_spec& spec) {
  if (spec.argv.empty()) return make_error(errc::internal, "empty argv");
  auto in = stdin_memfd(spec.stdin_data);
  if (!in) return std::move(in.error());
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    if (*in >= 0) ::close(*in);
    return make_error(errc::internal, std::string{"pipe: "} + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  if (*in >= 0)
    posix_spawn_file_actions_adddup2(&actions, *in, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  if (spec.merge_stderr) posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  // A new process group (so interrupt kills the whole tree), default signal
  // dispositions (parley ignores SIGPIPE; commands must not inherit that).
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                      | POSIX_SPAWN_SETSIGDEF);
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
  ::close(fds[1]);
  if (*in >= 0) ::close(*in);
  if (rc != 0) {
    ::close(fds[0]);
    return make_error(errc::internal,
                      "cannot start " + spec.argv[0] + ": " + std::strerror(rc));
  }
  return launched{pid, fds[0]};
}

}  // namespace parley
