#pragma once
// Creates one subprocess as the process reactor wants it: a new process
// group, default signal dispositions, stdin from a memfd or /dev/null,
// stdout (and maybe stderr) into a pipe.

#include <caf/expected.hpp>
#include <sys/types.h>

#include "actors/threads/process_reactor.hpp"

namespace parley {

struct launched {
  pid_t pid = 0;
  int out_fd = -1;  // read end of the output pipe (a pty's master), close-on-exec, blocking
  int err_fd = -1;  // read end of the stderr pipe (separate_stderr), else -1
  int in_fd = -1;   // write end of the stdin pipe (stdin_pipe; a pty's master, dup'd), else -1
};

/// Blocks until the child has exec'd (or failed to): never call it on a
/// scheduler worker. glibc's posix_spawnp reports exec failures (missing
/// program, bad cwd) as its result, so they never look like a process.
caf::expected<launched> launch(const spawn_spec& spec);

}  // namespace parley
