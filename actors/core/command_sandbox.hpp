#pragma once
// How a turn's command is confined: the argument list that runs it through
// `parley-sandbox` (actors/sandbox; a launcher that confines itself to the
// thread's sandbox, then execs the command), and the limits every command
// gets. Pure: no actors, no I/O but the launcher's one-time probe.

#include <chrono>
#include <cstdint>
#include <memory>
#include <variant>
#include <string>
#include <vector>

#include "protocol/types.hpp"

namespace parley {

/// Limits every command gets, confined or not.
struct command_limits {
  /// A command whose call names no timeout_ms is killed after this.
  std::chrono::milliseconds default_timeout = std::chrono::minutes(10);
  /// A larger timeout_ms is cut to this.
  std::chrono::milliseconds max_timeout = std::chrono::hours(1);
  /// Address space per process (bytes); 0 = none.
  uint64_t max_memory_bytes = 0;
  /// Processes (and threads) a command may have at once; 0 = none.
  uint64_t max_processes = 1024;
  /// CPU time per process (seconds); 0 = none.
  uint64_t max_cpu_seconds = 0;
};

struct sandbox_settings {
  /// The launcher (`parley-sandbox`); empty = none was found.
  std::string launcher;
  /// What the launcher's `--check` said: the sandbox modes can be enforced
  /// here. Otherwise `unavailable` says why.
  bool available = false;
  std::string unavailable;
  /// The operator accepted running commands unconfined where the host
  /// cannot confine them (`--sandbox-unconfined`); approvals say so.
  bool unconfined_ok = false;
  /// Never reachable from a confined command: parley's home, its audit
  /// log, its secrets.
  std::vector<std::string> hidden;
  /// Confined commands see only the system's folders (/usr, /etc, ...) and
  /// their own writable roots: one host's users cannot read each other's
  /// workspaces (`--sandbox-isolate-reads`).
  bool isolate_reads = false;
  command_limits limits;
  /// Set by the probe when a configured limit cannot be applied here.
  std::string limits_dropped;

  /// Whether a confined command runs confined (false: unconfined, as the
  /// operator accepted, or refused).
  bool confines() const { return available && !launcher.empty(); }
};

/// Permissions a client granted a thread beyond its sandbox policy
/// (item/permissions/requestApproval), for a turn or for the session:
/// absolute paths to read and to write, and the network. They widen a
/// confined command's sandbox and nothing else (what parley hides stays
/// hidden; a command that runs unconfined is not affected).
struct sandbox_grant {
  std::vector<std::string> read;
  std::vector<std::string> write;
  bool network = false;

  bool empty() const { return read.empty() && write.empty() && !network; }
  /// Adds what `more` grants (each path once).
  void merge(const sandbox_grant& more);
};

/// What to run for one command.
struct command_launch {
  std::vector<std::string> argv;
  /// The command runs outside any sandbox (full access, or an accepted
  /// escalation, or unconfined as the operator accepted).
  bool unconfined = false;
};

/// The argv that runs `script` with /bin/sh -c in `cwd` under `policy`:
/// through the launcher, confined unless the policy is full access or an
/// approval accepted the command (`escalated`: it runs as approved). `env` is the command's environment
/// (its TMPDIR is writable under workspace-write unless excluded). `grant`
/// widens a confined command's sandbox by exactly what it names: its write
/// paths become writable (under read-only too, and only they), the network
/// is on when granted, its read paths are visible under isolated reads.
/// Fails (the command must not run) when confinement is needed and the host
/// cannot give it, unless the operator accepted running unconfined.
struct launch_refusal {
  std::string reason;
};
std::variant<command_launch, launch_refusal> command_argv(const sandbox_settings& settings,
                                                          const protocol::sandbox_policy& policy,
                                                          const std::string& cwd,
                                                          const std::string& script,
                                                          bool escalated,
                                                          const std::vector<std::string>* env,
                                                          const sandbox_grant* grant = nullptr);

/// The same for a program and its arguments (command/exec: an argv, no
/// shell), confined to `policy` (never escalated: a client's command has
/// no approval to leave the sandbox).
std::variant<command_launch, launch_refusal> program_argv(const sandbox_settings& settings,
                                                          const protocol::sandbox_policy& policy,
                                                          const std::string& cwd,
                                                          const std::vector<std::string>& program,
                                                          const std::vector<std::string>* env);

/// The timeout a command gets: the call's `timeout_ms` (0 = none given)
/// bounded by the limits.
std::chrono::milliseconds command_timeout(const command_limits& limits, int64_t timeout_ms);

/// Runs `launcher --check` (blocking: call it once at start, never on an
/// actor) and fills `available` and `unavailable`.
void probe_sandbox(sandbox_settings& settings);

/// `parley-sandbox` beside the running executable, else empty.
std::string default_sandbox_launcher();

/// `path` made absolute and free of `.`, `..` and symlinks as far as it
/// exists (a hidden path must be the one the kernel will resolve).
std::string absolute_path(const std::string& path);

/// The settings a runtime uses when its host gave none: the launcher beside
/// the executable or at $PARLEY_SANDBOX_LAUNCHER, probed, hiding `hidden`.
std::shared_ptr<const sandbox_settings> default_sandbox(std::vector<std::string> hidden);

/// Whether a confined command's failure reads like the sandbox refusing it:
/// a nonzero exit whose output names what the sandbox answers (a read-only
/// file system, a permission or operation refused, no network, a system
/// call killed). A guess, as Codex's is: it only decides whether a person is
/// offered to run the command again outside, never whether anything runs.
/// parley-sandbox's own setup failure (exit 125) is not a refusal.
bool looks_refused_by_sandbox(int exit_code, const std::string& output);

/// Which of the per-command limits `limits` ended or stopped a command that
/// exited with `exit_code` and printed `output`, in words for the item
/// ("hit its CPU time limit (2 s, --command-max-cpu)"); empty: none that
/// can be told. The CPU cap is certain (SIGXCPU, status 152); memory and
/// processes are read from what failed (an allocation, a fork).
std::string limit_that_stopped(const command_limits& limits, int exit_code,
                               const std::string& output);

/// One line for the log at start: what this host enforces.
std::string describe_sandbox(const sandbox_settings& settings);

}  // namespace parley
