#pragma once

// The launcher's command line, parsed into a plan (README.md in this folder
// has the contract). Pure: no system calls, so the unit tests run anywhere.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parley::sandbox {

/// What the command may write (Codex's sandbox modes).
enum class mode {
  /// Nothing but character devices such as /dev/null.
  read_only,
  /// Only the writable roots, minus .git, .codex and .agents under each.
  workspace_write,
  /// No confinement; only the resource limits.
  danger_full_access,
};

/// Resource limits; an empty optional means "not limited".
struct limits {
  std::optional<std::uint64_t> max_memory;     ///< bytes (RLIMIT_AS)
  std::optional<std::uint64_t> max_cpu;        ///< seconds (RLIMIT_CPU)
  std::optional<std::uint64_t> max_processes;  ///< processes (pids cgroup)
  std::optional<std::uint64_t> max_file_size;  ///< bytes (RLIMIT_FSIZE)
};

/// Everything the command line asks for.
struct plan {
  mode sandbox_mode = mode::read_only;
  /// Writable roots (workspace-write only), absolute, as given.
  std::vector<std::string> writable;
  /// Paths made unreachable, absolute, as given.
  std::vector<std::string> hidden;
  /// With isolate_reads: directories visible besides the system ones.
  std::vector<std::string> readable;
  bool network = false;
  bool isolate_reads = false;
  struct limits limits;
  /// --check: report what this host can enforce instead of running.
  bool check = false;
  /// PROGRAM and ARGS (empty with --check).
  std::vector<std::string> command;
};

/// A plan or the reason the command line is wrong.
struct parse_result {
  std::optional<plan> parsed;
  std::string error;
};

/// Parses the arguments after argv[0].
parse_result parse_arguments(const std::vector<std::string>& args);

/// "read-only", "workspace-write" or "danger-full-access".
const char* to_string(mode x);

} // namespace parley::sandbox
