#include "actors/threads/process_reactor.hpp"

#include <caf/send.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/epoll.h>
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

uint64_t tag(process_id id, bool is_pidfd) { return (id << 1) | (is_pidfd ? 1u : 0u); }

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
      ev.data.u64 = tag(p.id, false);
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.out_fd, &ev);
      if (p.pid_fd >= 0) {
        ev.data.u64 = tag(p.id, true);
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.pid_fd, &ev);
      }
      procs_.emplace(p.id, std::move(c.proc));
    } else {
      auto i = procs_.find(c.id);
      // Only a process we have not reaped: its pid (= its group id) is still ours.
      if (i != procs_.end() && !i->second->exited)
        ::kill(-static_cast<pid_t>(i->second->pid), SIGKILL);
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
        if (p->pid_fd >= 0) ::close(p->pid_fd);
        if (p->out_fd >= 0) ::close(p->out_fd);
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
      auto i = procs_.find(data >> 1);
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
