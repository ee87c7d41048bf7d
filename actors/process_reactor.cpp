#include "actors/process_reactor.hpp"

#include <caf/send.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/counters.hpp"
#include "actors/log.hpp"
#include "protocol/errors.hpp"

extern char** environ;

namespace parley {

namespace {

using clock_type = std::chrono::steady_clock;

// After the shell exits, leftovers in its group are killed; a process that
// escaped the group may still hold the pipe: give up on it after this long.
constexpr auto eof_grace = std::chrono::seconds(2);

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

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

uint64_t tag(int64_t pid, bool is_pidfd) { return (static_cast<uint64_t>(pid) << 1) | (is_pidfd ? 1u : 0u); }

}  // namespace

struct process_reactor::process {
  int64_t pid = 0;
  int out_fd = -1;
  int pid_fd = -1;
  exec_actor sink;
  clock_type::time_point started;
  clock_type::time_point exited_at;
  bool exited = false;
  bool eof = false;
  int exit_code = -1;
  counted live{counters().processes};
};

process_reactor::process_reactor() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0) throw std::runtime_error("process_reactor: epoll/eventfd failed");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = ~uint64_t{0};
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  thread_ = std::thread([this] { run(); });
}

process_reactor::~process_reactor() {
  stop();
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void process_reactor::stop() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (stopping_) {
      // already stopping or stopped
    }
    stopping_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
}

void process_reactor::wake() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

caf::expected<int64_t> process_reactor::spawn(const std::string& command, const std::string& cwd,
                                              exec_actor sink) {
  spawn_spec spec;
  spec.argv = {"/bin/sh", "-c", command};
  spec.cwd = cwd;
  return spawn(spec, std::move(sink));
}

caf::expected<int64_t> process_reactor::spawn(const spawn_spec& spec, exec_actor sink) {
  if (spec.argv.empty()) return make_error(errc::internal, "spawn: empty argv");
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
  pid_t pid = 0;
  // glibc's posix_spawnp reports exec failures (missing program, bad cwd)
  // as its return value, so they never look like a started process.
  int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (*in >= 0) ::close(*in);
  if (rc != 0) {
    ::close(fds[0]);
    return make_error(errc::internal,
                      "cannot start " + spec.argv[0] + ": " + std::strerror(rc));
  }
  auto p = std::make_shared<process>();
  p->pid = pid;
  p->out_fd = fds[0];
  p->pid_fd = pidfd_open(pid);
  p->sink = std::move(sink);
  p->started = clock_type::now();
  if (p->pid_fd < 0) {
    PARLEY_ERROR("reactor event=pidfd_open_failed pid={} error={}", pid, std::strerror(errno));
  }
  ::fcntl(p->out_fd, F_SETFL, ::fcntl(p->out_fd, F_GETFL) | O_NONBLOCK);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    commands_.push_back({request::kind::add, std::move(p), pid});
  }
  wake();
  return int64_t{pid};
}

void process_reactor::kill(int64_t pid) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    commands_.push_back({request::kind::kill, nullptr, pid});
  }
  wake();
}

void process_reactor::drain_commands() {
  std::deque<request> batch;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    batch.swap(commands_);
  }
  for (auto& c : batch) {
    if (c.what == request::kind::add) {
      auto& p = *c.proc;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = tag(p.pid, false);
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.out_fd, &ev);
      if (p.pid_fd >= 0) {
        ev.data.u64 = tag(p.pid, true);
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.pid_fd, &ev);
      }
      procs_.emplace(p.pid, std::move(c.proc));
    } else {
      auto i = procs_.find(c.pid);
      // Only a process we have not reaped: its pid (= its group id) is still ours.
      if (i != procs_.end() && !i->second->exited) ::kill(-static_cast<pid_t>(c.pid), SIGKILL);
    }
  }
}

void process_reactor::on_readable(process& p) {
  char buf[65536];
  for (;;) {
    auto n = ::read(p.out_fd, buf, sizeof buf);
    if (n > 0) {
      caf::anon_send(p.sink, atom::output::value, std::string(buf, static_cast<size_t>(n)));
      if (static_cast<size_t>(n) < sizeof buf) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // EOF or a read error: the output is over.
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.out_fd, nullptr);
    ::close(p.out_fd);
    p.out_fd = -1;
    p.eof = true;
    return;
  }
}

void process_reactor::on_exit(process& p) {
  int status = 0;
  auto rc = ::waitpid(static_cast<pid_t>(p.pid), &status, WNOHANG);
  if (rc == 0) return;  // spurious
  // Leftovers of the group (background jobs) would keep the pipe open.
  ::kill(-static_cast<pid_t>(p.pid), SIGKILL);
  p.exited = true;
  p.exited_at = clock_type::now();
  if (rc > 0 && WIFEXITED(status))
    p.exit_code = WEXITSTATUS(status);
  else if (rc > 0 && WIFSIGNALED(status))
    p.exit_code = 128 + WTERMSIG(status);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.pid_fd, nullptr);
  ::close(p.pid_fd);
  p.pid_fd = -1;
}

void process_reactor::finish(process& p) {
  if (p.out_fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.out_fd, nullptr);
    ::close(p.out_fd);
    p.out_fd = -1;
  }
  exit_info info;
  info.exit_code = p.exit_code;
  info.pid = p.pid;
  info.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(p.exited_at - p.started).count();
  caf::anon_send(p.sink, atom::exited::value, info);
}

void process_reactor::check_deadlines() {
  auto now = clock_type::now();
  for (auto i = procs_.begin(); i != procs_.end();) {
    auto& p = *i->second;
    if (p.exited && !p.eof && now - p.exited_at > eof_grace) p.eof = true;
    if (p.exited && p.eof) {
      finish(p);
      i = procs_.erase(i);
    } else {
      ++i;
    }
  }
}

void process_reactor::run() {
  epoll_event events[64];
  for (;;) {
    bool stopping;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      stopping = stopping_;
    }
    drain_commands();
    if (stopping) {
      for (auto& [pid, p] : procs_)
        if (!p->exited) ::kill(-static_cast<pid_t>(pid), SIGKILL);
      for (auto& [pid, p] : procs_) {
        if (!p->exited) {
          int status = 0;
          ::waitpid(static_cast<pid_t>(pid), &status, 0);  // SIGKILLed: returns at once
        }
        if (p->pid_fd >= 0) ::close(p->pid_fd);
        if (p->out_fd >= 0) ::close(p->out_fd);
      }
      procs_.clear();
      return;
    }
    bool any_waiting_eof = false;
    for (auto& [pid, p] : procs_) any_waiting_eof = any_waiting_eof || (p->exited && !p->eof);
    int n = ::epoll_wait(epoll_fd_, events, 64, any_waiting_eof ? 100 : -1);
    if (n < 0 && errno != EINTR) {
      PARLEY_ERROR("reactor event=epoll_wait_failed error={}", std::strerror(errno));
      return;
    }
    for (int k = 0; k < n; ++k) {
      auto data = events[k].data.u64;
      if (data == ~uint64_t{0}) {
        uint64_t count;
        [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof count);
        continue;
      }
      auto i = procs_.find(static_cast<int64_t>(data >> 1));
      if (i == procs_.end()) continue;
      if (data & 1u)
        on_exit(*i->second);
      else
        on_readable(*i->second);
    }
    check_deadlines();
  }
}

}  // namespace parley
