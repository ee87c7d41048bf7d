#pragma once
// What /proc says about the server under test: memory and CPU time of the
// process and every live descendant (a wrapper script, a network namespace,
// a mock model), summed.

#include <sys/types.h>

namespace parley::bench {

struct proc_figures {
  long peak_rss_kb = 0;  // VmHWM
  long rss_kb = 0;       // VmRSS, now
  double cpu_s = 0;      // user + system
};

/// The figures of `root` and its live descendants.
proc_figures read_proc(pid_t root);

}  // namespace parley::bench
