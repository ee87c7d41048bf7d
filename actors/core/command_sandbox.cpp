#include "actors/core/command_sandbox.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace parley {

namespace {

/// The value of NAME in a "NAME=value" list; empty when absent.
std::string env_value(const std::vector<std::string>& env, const std::string& name) {
  auto prefix = name + "=";
  for (const auto& e : env)
    if (e.compare(0, prefix.size(), prefix) == 0) return e.substr(prefix.size());
  return {};
}

void add_limits(std::vector<std::string>& argv, const command_limits& limits) {
  if (limits.max_memory_bytes > 0) {
    argv.emplace_back("--max-memory");
    argv.push_back(std::to_string(limits.max_memory_bytes));
  }
  if (limits.max_processes > 0) {
    argv.emplace_back("--max-processes");
    argv.push_back(std::to_string(limits.max_processes));
  }
  if (limits.max_cpu_seconds > 0) {
    argv.emplace_back("--max-cpu");
    argv.push_back(std::to_string(limits.max_cpu_seconds));
  }
}

/// The writable roots of a workspace-write command: its cwd, the policy's
/// roots, /tmp and $TMPDIR unless the policy excludes them.
std::vector<std::string> writable_roots(const protocol::sandbox_policy& policy,
                                        const std::string& cwd,
                                        const std::vector<std::string>* env) {
  std::vector<std::string> roots{cwd};
  roots.insert(roots.end(), policy.writable_roots.begin(), policy.writable_roots.end());
  if (!policy.exclude_slash_tmp) roots.emplace_back("/tmp");
  if (!policy.exclude_tmpdir_env_var) {
    auto tmpdir = env ? env_value(*env, "TMPDIR") : std::string{};
    if (!env) {
      if (const char* t = std::getenv("TMPDIR")) tmpdir = t;
    }
    if (!tmpdir.empty() && tmpdir.front() == '/') roots.push_back(tmpdir);
  }
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

void add_once(std::vector<std::string>& to, const std::vector<std::string>& paths) {
  for (const auto& p : paths)
    if (std::find(to.begin(), to.end(), p) == to.end()) to.push_back(p);
}

}  // namespace

void sandbox_grant::merge(const sandbox_grant& more) {
  add_once(read, more.read);
  add_once(write, more.write);
  network = network || more.network;
}

std::variant<command_launch, launch_refusal> command_argv(const sandbox_settings& settings,
                                                          const protocol::sandbox_policy& policy,
                                                          const std::string& cwd,
                                                          const std::string& script,
                                                          bool escalated,
                                                          const std::vector<std::string>* env,
                                                          const sandbox_grant* grant) {
  using kind = protocol::sandbox_policy::kind;
  static const sandbox_grant none;
  const auto& granted = grant ? *grant : none;
  // An external sandbox is the host's own: parley runs the command as it is.
  bool leaves = policy.type == kind::danger_full_access || policy.type == kind::external_sandbox
                || escalated;
  if (!leaves && !settings.confines() && !settings.unconfined_ok)
    return launch_refusal{"the sandbox cannot be enforced here ("
                          + (settings.unavailable.empty() ? std::string{"no parley-sandbox"}
                                                          : settings.unavailable)
                          + "), so the command did not run; an operator may accept running "
                            "commands unconfined with --sandbox-unconfined"};
  command_launch out;
  out.unconfined = leaves || !settings.confines();
  const auto& l = settings.limits;
  bool limited = l.max_memory_bytes > 0 || l.max_processes > 0 || l.max_cpu_seconds > 0;
  if (out.unconfined && (!limited || settings.launcher.empty())) {
    // Nothing for the launcher to do (1.4 ms less per command), or none to
    // do it: the shell as it is.
    out.argv = {"/bin/sh", "-c", script};
    return out;
  }
  out.argv = {settings.launcher, "--mode"};
  if (out.unconfined) {
    out.argv.emplace_back("danger-full-access");
  } else if (policy.type == kind::read_only && granted.write.empty()) {
    out.argv.emplace_back("read-only");
  } else {
    // Read-only with granted paths is the launcher's workspace-write with
    // those paths alone writable (not the cwd, not /tmp).
    auto roots = policy.type == kind::read_only ? std::vector<std::string>{}
                                                : writable_roots(policy, cwd, env);
    add_once(roots, granted.write);
    out.argv.emplace_back("workspace-write");
    for (const auto& root : roots) {
      out.argv.emplace_back("--writable");
      out.argv.push_back(root);
    }
  }
  if (!out.unconfined) {
    out.argv.emplace_back("--network");
    out.argv.emplace_back(policy.network_access || granted.network ? "on" : "off");
    if (settings.isolate_reads) {
      out.argv.emplace_back("--isolate-reads");
      for (const auto& path : granted.read) {
        out.argv.emplace_back("--readable");
        out.argv.push_back(path);
      }
    }
    for (const auto& path : settings.hidden) {
      out.argv.emplace_back("--hide");
      out.argv.push_back(path);
    }
  }
  add_limits(out.argv, settings.limits);
  out.argv.insert(out.argv.end(), {"--", "/bin/sh", "-c", script});
  return out;
}

std::variant<command_launch, launch_refusal> program_argv(const sandbox_settings& settings,
                                                          const protocol::sandbox_policy& policy,
                                                          const std::string& cwd,
                                                          const std::vector<std::string>& program,
                                                          const std::vector<std::string>* env) {
  // The shell's launch, with the program in the shell's place (its last
  // three arguments: /bin/sh -c SCRIPT).
  auto launch = command_argv(settings, policy, cwd, std::string{}, false, env);
  if (auto* ok = std::get_if<command_launch>(&launch)) {
    ok->argv.resize(ok->argv.size() - 3);
    ok->argv.insert(ok->argv.end(), program.begin(), program.end());
  }
  return launch;
}

std::chrono::milliseconds command_timeout(const command_limits& limits, int64_t timeout_ms) {
  if (timeout_ms <= 0) return std::min(limits.default_timeout, limits.max_timeout);
  return std::min(std::chrono::milliseconds{timeout_ms}, limits.max_timeout);
}

void probe_sandbox(sandbox_settings& settings) {
  settings.available = false;
  if (settings.launcher.empty()) {
    settings.unavailable = "parley-sandbox was not found beside parley";
    return;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    settings.unavailable = std::string{"pipe: "} + std::strerror(errno);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::string check = "--check";
  char* argv[] = {settings.launcher.data(), check.data(), nullptr};
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, settings.launcher.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  std::string said;
  if (rc == 0) {
    char buf[4096];
    for (;;) {
      auto n = ::read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      said.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fds[0]);
  if (rc != 0) {
    settings.unavailable = "cannot run " + settings.launcher + ": " + std::strerror(rc);
    return;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    settings.available = true;
    settings.unavailable.clear();
    // The process cap is a limit, not the confinement: where this host has
    // no pids cgroup for it (and parley runs as root, where RLIMIT_NPROC
    // does not bind), commands run without it rather than not at all, and
    // the start's log says so.
    if (said.find("\"processes\":false") != std::string::npos && settings.limits.max_processes > 0) {
      settings.limits.max_processes = 0;
      settings.limits_dropped = "no process cap: this host gives parley-sandbox no pids cgroup";
    }
    return;
  }
  settings.unavailable = said.empty() ? "parley-sandbox --check failed" : said;
}

std::string default_sandbox_launcher() {
  char self[PATH_MAX];
  auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  std::string path(self, static_cast<size_t>(n));
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return {};
  auto launcher = path.substr(0, slash + 1) + "parley-sandbox";
  return ::access(launcher.c_str(), X_OK) == 0 ? launcher : std::string{};
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? path : p.string();
}

std::shared_ptr<const sandbox_settings> default_sandbox(std::vector<std::string> hidden) {
  auto s = std::make_shared<sandbox_settings>();
  s->launcher = default_sandbox_launcher();
  if (s->launcher.empty())
    if (const char* env = std::getenv("PARLEY_SANDBOX_LAUNCHER")) s->launcher = env;
  for (auto& path : hidden)
    if (!path.empty()) s->hidden.push_back(absolute_path(path));
  probe_sandbox(*s);
  return s;
}

std::string describe_sandbox(const sandbox_settings& settings) {
  if (settings.confines())
    return "commands run confined to their thread's sandbox (" + settings.launcher + ")"
           + (settings.limits_dropped.empty() ? "" : "; " + settings.limits_dropped);
  if (settings.unconfined_ok)
    return "commands run UNCONFINED, as --sandbox-unconfined accepts: " + settings.unavailable;
  return "the sandbox cannot be enforced here (" + settings.unavailable
         + "): commands outside danger-full-access will not run";
}

namespace {

std::string lowercase(const std::string& text) {
  std::string lower(text.size(), '\0');
  std::transform(text.begin(), text.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

bool says_any(const std::string& lower, std::initializer_list<const char*> phrases) {
  for (const char* p : phrases)
    if (lower.find(p) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string limit_that_stopped(const command_limits& limits, int exit_code,
                               const std::string& output) {
  constexpr int killed_by_sigxcpu = 128 + SIGXCPU;
  if (limits.max_cpu_seconds > 0 && exit_code == killed_by_sigxcpu)
    return "hit its CPU time limit (" + std::to_string(limits.max_cpu_seconds)
           + " s, --command-max-cpu) and was killed";
  auto lower = lowercase(output);
  if (limits.max_memory_bytes > 0 && exit_code != 0
      && says_any(lower, {"cannot allocate memory", "out of memory", "memory exhausted",
                          "bad_alloc", "memoryerror"}))
    return "hit its memory limit (" + std::to_string(limits.max_memory_bytes)
           + " bytes of address space, --command-max-memory): an allocation failed";
  if (limits.max_processes > 0
      && (says_any(lower, {"cannot fork", "can't fork"})
          || (says_any(lower, {"resource temporarily unavailable"})
              && says_any(lower, {"fork", "thread", "spawn"}))))
    return "hit its process limit (" + std::to_string(limits.max_processes)
           + ", --command-max-processes): a new process was refused";
  return {};
}

bool looks_refused_by_sandbox(int exit_code, const std::string& output) {
  if (exit_code == 0) return false;
  if (exit_code == 125 && output.find("parley-sandbox:") != std::string::npos) return false;
  auto lower = lowercase(output);
  for (const char* said : {"read-only file system", "permission denied", "operation not permitted",
                           "network is unreachable", "bad system call"})
    if (lower.find(said) != std::string::npos) return true;
  return false;
}

}  // namespace parley
