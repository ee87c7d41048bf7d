#include "actors/threads/process_reactor.hpp"

#include <caf/send.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/core/log.hpp"
#include "actors/threads/process_launch.hpp"
#include "actors/core/errors.hpp"
#include "actors/core/telemetry.hpp"

namespace parley {

namespace {

using clock_type = std::chrono::steady_clock;

// After the shell exits, leftovers in its group are killed; a process that
// escaped the group may still hold the pipe: give up on it after this long.
constexpr auto eof_grace = std::chrono::seconds(2);

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// What an epoll event is about: a process and which of its descriptors.
enum fd_kind : uint64_t { out_kind = 0, pid_kind = 1, err_kind = 2, in_kind = 3 };
uint64_t tag(process_id id, fd_kind kind) { return (id << 2) | kind; }

// The one exit of a process that never ran.
void report_not_started(const process_sink_actor& sink, int exit_code, std::string why) {
  exit_info info;
  info.exit_code = exit_code;
  info.not_started = std::move(why);
  caf::anon_send(sink, atom::exited::value, std::move(info));
}

constexpr int killed_code = 128 + SIGKILL;
constexpr int cannot_start_code = 127;  // what a shell says for a missing program

}  // namespace

struct process_reactor::process {
  process_id id = 0;
  int64_t pid = 0;
  int out_fd = -1;
  int err_fd = -1;  // separate_stderr
  int in_fd = -1;   // stdin_pipe or pty: what write_stdin writes to
  bool pty = false;
  std::string in_buf;     // written by write_stdin, not yet taken by the child
  bool close_in = false;  // close stdin once in_buf is written
  int pid_fd = -1;
  process_sink_actor sink;
  clock_type::time_point started;
  clock_type::time_point exited_at;
  bool exited = false;
  bool eof = false;
  int exit_code = -1;
  counted live;
};

process_reactor::process_reactor(process_reactor_options options)
    : options_(std::move(options)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0) throw std::runtime_error("process_reactor: epoll/eventfd failed");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = ~uint64_t{0};
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  thread_ = std::thread([this] { run(); });
  auto n = options_.spawners != 0 ? options_.spawners
                                  : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i) spawners_.emplace_back([this] { spawn_loop(); });
}

process_reactor::~process_reactor() {
  stop();
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void process_reactor::stop() {
  std::deque<queued_spawn> dropped;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
    dropped.swap(spawns_);
    queued_ids_.clear();
  }
  spawn_cv_.notify_all();
  for (auto& q : dropped) report_not_started(q.sink, killed_code, "shutting down");
  // The spawners first: a start in progress still hands its process over
  // (killed) to the loop, which then kills and reaps every group.
  for (auto& t : spawners_)
    if (t.joinable()) t.join();
  {
    std::lock_guard<std::mutex> guard{mtx_};
    loop_stopping_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
}

void process_reactor::wake() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

process_id process_reactor::spawn(const std::string& command, const std::string& cwd,
                                  process_sink_actor sink,
                                  std::shared_ptr<const std::vector<std::string>> env) {
  spawn_spec spec;
  spec.argv = {"/bin/sh", "-c", command};
  spec.cwd = cwd;
  spec.env = std::move(env);
  return spawn(std::move(spec), std::move(sink));
}

process_id process_reactor::spawn(spawn_spec spec, process_sink_actor sink) {
  process_id id = 0;
  bool queued = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    id = next_id_++;
    if (!stopping_) {
      queued_ids_.insert(id);
      spawns_.push_back({id, std::move(spec), sink});
      queued = true;
    }
  }
  if (queued)
    spawn_cv_.notify_one();
  else
    report_not_started(sink, killed_code, "shutting down");
  return id;
}

void process_reactor::write_stdin(process_id id, std::string data, bool close) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    request r{request::kind::write, nullptr, id};
    r.data = std::move(data);
    r.close = close;
    commands_.push_back(std::move(r));
  }
  wake();
}

void process_reactor::resize(process_id id, uint16_t rows, uint16_t cols) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    request r{request::kind::resize, nullptr, id};
    r.rows = rows;
    r.cols = cols;
    commands_.push_back(std::move(r));
  }
  wake();
}

void process_reactor::kill(process_id id) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    // Not started yet: it never will be (the spawner reports it).
    if (queued_ids_.count(id) != 0 || starting_.count(id) != 0) {
      cancelled_.insert(id);
      return;
    }
    commands_.push_back({request::kind::kill, nullptr, id});
  }
  wake();
}

// Takes the next start off the queue; false once stopping. A start killed
// while queued is reported here and skipped.
bool process_reactor::take_next(queued_spawn& next) {
  for (;;) {
    std::unique_lock<std::mutex> lock{mtx_};
    spawn_cv_.wait(lock, [this] { return stopping_ || !spawns_.empty(); });
    if (stopping_) return false;
    next = std::move(spawns_.front());
    spawns_.pop_front();
    queued_ids_.erase(next.id);
    if (cancelled_.erase(next.id) == 0) {
      starting_.insert(next.id);
      return true;
    }
    lock.unlock();
    report_not_started(next.sink, killed_code, "killed before it started");
  }
}

void process_reactor::spawn_loop() {
  queued_spawn next;
  while (take_next(next)) {
    start_one(next);
    next = queued_spawn{};
  }
}

void process_reactor::start_one(queued_spawn& q) {
  if (options_.before_spawn) options_.before_spawn();
  {
    std::unique_lock<std::mutex> lock{mtx_};
    bool killed = cancelled_.erase(q.id) != 0;
    if (killed || stopping_) {
      starting_.erase(q.id);
      lock.unlock();
      report_not_started(q.sink, killed_code, killed ? "killed before it started" : "shutting down");
      return;
    }
  }
  auto started = launch(q.spec);
  if (!started) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      starting_.erase(q.id);
      cancelled_.erase(q.id);
    }
    report_not_started(q.sink, cannot_start_code, message_of(started.error()));
    return;
  }
  auto p = std::make_shared<process>();
  p->live = count_live(options_.telemetry, &live_counters::processes);
  p->id = q.id;
  p->pid = started->pid;
  p->out_fd = started->out_fd;
  p->err_fd = started->err_fd;
  p->in_fd = started->in_fd;
  p->pty = q.spec.pty.has_value();
  if (p->err_fd >= 0) ::fcntl(p->err_fd, F_SETFL, ::fcntl(p->err_fd, F_GETFL) | O_NONBLOCK);
  if (p->in_fd >= 0) ::fcntl(p->in_fd, F_SETFL, ::fcntl(p->in_fd, F_GETFL) | O_NONBLOCK);
  p->pid_fd = pidfd_open(started->pid);
  p->sink = std::move(q.sink);
  p->started = clock_type::now();
  if (p->pid_fd < 0) {
    PARLEY_ERROR("reactor event=pidfd_open_failed pid={} error={}", p->pid, std::strerror(errno));
  }
  ::fcntl(p->out_fd, F_SETFL, ::fcntl(p->out_fd, F_GETFL) | O_NONBLOCK);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    starting_.erase(q.id);
    // Killed (or stopped) while it was being created: at once, before anyone
    // can read a byte of it; the loop still reaps it and reports the exit.
    if (cancelled_.erase(q.id) != 0 || stopping_) ::kill(-started->pid, SIGKILL);
    commands_.push_back({request::kind::add, std::move(p), q.id});
  }
  wake();
}

// A write or resize can come before its process is in procs_ (sent right
// after spawn(), while the process is still being created): it waits in
// deferred_ until the process is added, and is dropped once the process is
// neither starting nor running.
bool process_reactor::still_starting(process_id id) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (queued_ids_.count(id) != 0 || starting_.count(id) != 0) return true;
  for (const auto& c : commands_)
    if (c.what == request::kind::add && c.id == id) return true;
  return false;
}

void process_reactor::drain_commands() {
  std::deque<request> batch;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    batch.swap(commands_);
  }
  // The processes first, then what is asked of them: what waited for its
  // process before what came since (a write deferred earlier must reach
  // stdin before a later one that closes it). Built by moving each request
  // once: deque::insert of an empty range in the middle (libstdc++)
  // self-move-assigns the elements behind it, which emptied a write's bytes
  // whenever its process was added in the same batch.
  std::deque<request> ordered;
  for (auto& c : batch)
    if (c.what == request::kind::add) ordered.push_back(std::move(c));
  for (auto& c : deferred_) ordered.push_back(std::move(c));
  deferred_.clear();
  for (auto& c : batch)
    if (c.what != request::kind::add) ordered.push_back(std::move(c));
  batch.swap(ordered);
  for (auto& c : batch) {
    bool for_process = c.what == request::kind::write || c.what == request::kind::resize;
    if (for_process && procs_.count(c.id) == 0) {
      if (still_starting(c.id)) deferred_.push_back(std::move(c));
      continue;
    }
    if (c.what == request::kind::add) {
      auto& p = *c.proc;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = tag(p.id, out_kind);
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.out_fd, &ev);
      if (p.err_fd >= 0) {
        ev.data.u64 = tag(p.id, err_kind);
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.err_fd, &ev);
      }
      if (p.pid_fd >= 0) {
        ev.data.u64 = tag(p.id, pid_kind);
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.pid_fd, &ev);
      }
      procs_.emplace(p.id, std::move(c.proc));
    } else if (c.what == request::kind::write) {
      auto i = procs_.find(c.id);
      if (i == procs_.end() || i->second->in_fd < 0 || i->second->close_in) continue;
      auto& p = *i->second;
      p.in_buf += c.data;
      if (c.close) {
        if (p.pty) p.in_buf += '\x04';  // a terminal's end of input
        p.close_in = true;
      }
      flush_stdin(p);
    } else if (c.what == request::kind::resize) {
      auto i = procs_.find(c.id);
      if (i == procs_.end() || !i->second->pty || i->second->in_fd < 0) continue;
      winsize ws{};
      ws.ws_row = c.rows;
      ws.ws_col = c.cols;
      ::ioctl(i->second->in_fd, TIOCSWINSZ, &ws);
    } else {
      auto i = procs_.find(c.id);
      // Only a process we have not reaped: its pid (= its group id) is still ours.
      if (i != procs_.end() && !i->second->exited)
        ::kill(-static_cast<pid_t>(i->second->pid), SIGKILL);
    }
  }
}

void process_reactor::on_readable(process& p, bool is_stderr) {
  char buf[65536];
  int& fd = is_stderr ? p.err_fd : p.out_fd;
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      std::string chunk(buf, static_cast<size_t>(n));
      if (is_stderr)  // only a sink that asked for it (separate_stderr) gets this
        caf::anon_send(caf::actor_cast<caf::actor>(p.sink), atom::err_output::value,
                       std::move(chunk));
      else
        caf::anon_send(p.sink, atom::output::value, std::move(chunk));
      if (static_cast<size_t>(n) < sizeof buf) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // EOF or a read error (a pty's master: EIO once the slave is closed):
    // this stream is over; the output is once both are.
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    fd = -1;
    p.eof = p.out_fd < 0 && p.err_fd < 0;
    return;
  }
}

void process_reactor::flush_stdin(process& p) {
  while (!p.in_buf.empty()) {
    auto n = ::write(p.in_fd, p.in_buf.data(), p.in_buf.size());
    if (n > 0) {
      p.in_buf.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The child is not reading: wait until it does, blocking nobody.
      epoll_event ev{};
      ev.events = EPOLLOUT;
      ev.data.u64 = tag(p.id, in_kind);
      if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, p.in_fd, &ev) != 0)
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.in_fd, &ev);
      return;
    }
    // EPIPE (the child closed its stdin) or worse: nothing more goes in.
    p.in_buf.clear();
    p.close_in = true;
    break;
  }
  if (p.close_in) close_stdin(p);
}

void process_reactor::close_stdin(process& p) {
  if (p.in_fd < 0) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.in_fd, nullptr);
  ::close(p.in_fd);
  p.in_fd = -1;
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
  for (int* fd : {&p.out_fd, &p.err_fd}) {
    if (*fd < 0) continue;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, *fd, nullptr);
    ::close(*fd);
    *fd = -1;
  }
  close_stdin(p);
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
      stopping = loop_stopping_;
    }
    drain_commands();
    if (stopping) {
      for (auto& [id, p] : procs_)
        if (!p->exited) ::kill(-static_cast<pid_t>(p->pid), SIGKILL);
      for (auto& [id, p] : procs_) {
        if (!p->exited) {
          int status = 0;
          ::waitpid(static_cast<pid_t>(p->pid), &status, 0);  // SIGKILLed: returns at once
        }
        for (int fd : {p->pid_fd, p->out_fd, p->err_fd, p->in_fd})
          if (fd >= 0) ::close(fd);
      }
      procs_.clear();
      return;
    }
    bool any_waiting_eof = false;
    for (auto& [id, p] : procs_) any_waiting_eof = any_waiting_eof || (p->exited && !p->eof);
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
      auto i = procs_.find(data >> 2);
      if (i == procs_.end()) continue;
      switch (data & 3u) {
        case pid_kind:
          on_exit(*i->second);
          break;
        case in_kind:
          if (i->second->in_fd >= 0) flush_stdin(*i->second);
          break;
        default:
          on_readable(*i->second, (data & 3u) == err_kind);
      }
    }
    check_deadlines();
  }
}

}  // namespace parley
