#include "actors/mcp/stdio_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <cerrno>
#include <cstring>

#include "actors/core/log.hpp"
#include "actors/mcp/framing.hpp"
#include "actors/mcp/messages.hpp"

namespace parley::mcp {

namespace child_impl {

// How often a blocked reader looks at its stop flag.
constexpr int poll_ms = 100;
// stderr goes to the log a line at a time, each cut at this size, and at
// most this many lines per start (a chatty server must not fill the log).
constexpr size_t max_stderr_line = 2048;
constexpr size_t max_stderr_lines = 2000;

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended (status " + std::to_string(status) + ")";
}

/// Waits until `fd` is readable or `stop` is set (`stop_fd` readable says
/// so at once); false on stop.
bool wait_readable(int fd, int stop_fd, const std::atomic<bool>& stop) {
  while (!stop) {
    pollfd p[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    int n = ::poll(p, 2, child_impl::poll_ms);
    if (n > 0 && (p[1].revents & POLLIN)) return false;
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // read() will say what is wrong
  }
  return false;
}

}  // namespace child_impl

std::unique_ptr<stdio_child> stdio_child::start(const child_spec& spec, caf::actor sink,
                                                uint64_t generation, std::string& error) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    error = std::string{"pipe: "} + std::strerror(errno);
    return nullptr;
  }
  if (::pipe2(out, O_CLOEXEC) != 0) {
    error = std::string{"pipe: "} + std::strerror(errno);
    ::close(in[0]), ::close(in[1]);
    return nullptr;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    error = std::string{"pipe: "} + std::strerror(errno);
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    return nullptr;
  }
  int stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    error = std::string{"eventfd: "} + std::strerror(errno);
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    ::close(err[0]), ::close(err[1]);
    return nullptr;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  // Its own process group (killed whole, npx and node alike), no blocked
  // signals, default dispositions (parley ignores SIGPIPE and blocks the
  // stop signals).
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    error = "cannot start `" + spec.argv[0] + "`: " + std::strerror(rc);
    ::close(in[1]), ::close(out[0]), ::close(err[0]), ::close(stop_fd);
    return nullptr;
  }
  std::unique_ptr<stdio_child> child{new stdio_child};
  child->pid_ = pid;
  child->in_fd_ = in[1];
  child->out_fd_ = out[0];
  child->err_fd_ = err[0];
  child->stop_fd_ = stop_fd;
  child->name_ = spec.name;
  auto* c = child.get();
  child->writer_ = std::thread([c] { c->write_loop(); });
  child->reader_ = std::thread([c, sink, generation] { c->read_stdout(sink, generation); });
  child->errors_ = std::thread([c] { c->read_stderr(); });
  return child;
}

stdio_child::~stdio_child() {
  {
    std::lock_guard<std::mutex> guard{lock_};
    stopping_ = true;
    *stop_ = true;  // under the lock: the reader's wait for room looks at it
    if (!reaped_) ::kill(-pid_, SIGKILL);
  }
  wake_.notify_all();
  room_.notify_all();
  uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof one);
  writer_.join();
  reader_.join();
  errors_.join();
  ::close(in_fd_);
  ::close(out_fd_);
  ::close(err_fd_);
  ::close(stop_fd_);
}

void stdio_child::consumed(size_t bytes) {
  {
    std::lock_guard<std::mutex> guard{lock_};
    bytes += line_overhead;
    unhandled_bytes_ = unhandled_bytes_ > bytes ? unhandled_bytes_ - bytes : 0;
  }
  room_.notify_one();
}

bool stdio_child::send(std::string line) {
  {
    std::lock_guard<std::mutex> guard{lock_};
    if (stopping_) return true;  // going away anyway
    if (queued_bytes_ + line.size() + 1 > max_queued_bytes) return false;
    line.push_back('\n');
    queued_bytes_ += line.size();
    queue_.push_back(std::move(line));
  }
  wake_.notify_one();
  return true;
}

void stdio_child::write_loop() {
  for (;;) {
    std::string line;
    {
      std::unique_lock<std::mutex> guard{lock_};
      wake_.wait(guard, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      line = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= line.size();
    }
    size_t done = 0;
    while (done < line.size()) {
      auto n = ::write(in_fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the child stopped reading (EPIPE): stdout's end tells the actor
      done += static_cast<size_t>(n);
    }
  }
}

void stdio_child::read_stdout(caf::actor sink, uint64_t generation) {
  line_splitter splitter;
  std::vector<std::string> lines;
  char buf[65536];
  for (;;) {
    {
      // A server that writes faster than its actor handles waits here: its
      // pipe fills and its writes block, parley's memory stays bounded.
      std::unique_lock<std::mutex> guard{lock_};
      room_.wait(guard, [this] { return *stop_ || unhandled_bytes_ < max_unhandled_bytes; });
    }
    if (!child_impl::wait_readable(out_fd_, stop_fd_, *stop_)) break;
    auto n = ::read(out_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    lines.clear();
    bool ok = splitter.feed(std::string_view{buf, static_cast<size_t>(n)}, lines);
    if (!lines.empty()) {
      std::lock_guard<std::mutex> guard{lock_};
      for (const auto& l : lines) unhandled_bytes_ += l.size() + line_overhead;
    }
    for (auto& l : lines) caf::anon_send(sink, atom::line::value, generation, std::move(l));
    if (!ok) {
      caf::anon_send(sink, atom::cut::value, generation,
                     "sent a line longer than " + std::to_string(max_line_bytes >> 20) + " MiB");
      break;
    }
  }
  // Whatever ended the reading, the process goes with it (a server that
  // closed its stdout cannot answer any more).
  int status = 0;
  {
    // Under the lock the destructor kills under: a reaped pid may be reused.
    std::lock_guard<std::mutex> guard{lock_};
    ::kill(-pid_, SIGKILL);
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    reaped_ = true;
  }
  if (!*stop_)
    caf::anon_send(sink, atom::exited::value, generation, child_impl::describe_status(status));
}

void stdio_child::read_stderr() {
  char buf[8192];
  size_t logged = 0;
  std::string partial;
  for (;;) {
    if (!child_impl::wait_readable(err_fd_, stop_fd_, *stop_)) return;
    auto n = ::read(err_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    // Lines past the bound are cut, not fatal: stderr is only for people.
    std::string_view data{buf, static_cast<size_t>(n)};
    while (!data.empty()) {
      auto nl = data.find('\n');
      auto piece = data.substr(0, nl);
      if (partial.size() < child_impl::max_stderr_line)
        partial.append(piece.substr(0, child_impl::max_stderr_line - partial.size()));
      if (nl == std::string_view::npos) break;
      if (logged < child_impl::max_stderr_lines)
        PARLEY_INFO("mcp event=stderr server={} line=\"{}\"", name_, partial);
      else if (logged == child_impl::max_stderr_lines)
        PARLEY_WARN("mcp event=stderr_suppressed server={} after_lines={}", name_, logged);
      ++logged;
      partial.clear();
      data.remove_prefix(nl + 1);
    }
  }
}

}  // namespace parley::mcp
