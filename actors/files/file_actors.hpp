#pragma once
// The actors behind a connection's fs/* and fuzzyFileSearch requests. Both
// are private to the connection that spawns them (linked to it):
//
//   file_worker  detached: runs the blocking file jobs (file_ops.hpp) one at
//                a time, in the order they came, on a thread of its own, so no
//                scheduler worker waits on a disk.
//   fs_watcher   event-based: owns one inotify descriptor (non-blocking, read
//                on a 50 ms tick only while a watch exists), batches what
//                changed for 200 ms per watch (Codex's debounce) and sends
//                each batch to the connection as (fs_changed, id, paths).

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/files/file_ops.hpp"

namespace parley::files {

/// A blocking job and its answer, as messages (local only).
struct file_job {
  std::function<answer()> run;
};
struct file_answer {
  answer value;
};

}  // namespace parley::files

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::files::file_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::files::file_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::files::root_set)

namespace parley::atom {
using fs_job     = caf::atom_constant<caf::atom("fsjob")>;      // run a blocking file job
using fs_watch   = caf::atom_constant<caf::atom("fswatch")>;    // fs/watch
using fs_unwatch = caf::atom_constant<caf::atom("fsunwatch")>;  // fs/unwatch
using fs_poll    = caf::atom_constant<caf::atom("fspoll")>;     // the watcher's tick
using fs_changed = caf::atom_constant<caf::atom("fschanged")>;  // a watch's batch of changes
}  // namespace parley::atom

namespace parley::files {

using file_worker_actor
    = caf::typed_actor<caf::replies_to<atom::fs_job, file_job>::with<file_answer>>;

file_worker_actor::behavior_type file_worker(file_worker_actor::pointer self, int unused);

/// Where a watcher sends its batches: (fs_changed, watch id, sorted paths).
using fs_change_sink = caf::typed_actor<
    caf::reacts_to<atom::fs_changed, std::string, std::vector<std::string>>>;

using fs_watcher_actor = caf::typed_actor<
    // fs/watch: the watch id, the connection's roots, the path asked for.
    caf::replies_to<atom::fs_watch, std::string, root_set, std::string>::with<file_answer>,
    // fs/unwatch: answered after the last batch of that watch was sent.
    caf::replies_to<atom::fs_unwatch, std::string>::with<file_answer>,
    // The tick that reads the inotify descriptor.
    caf::reacts_to<atom::fs_poll, uint64_t>>;

struct fs_watch_entry {
  int wd = -1;
  std::string path;     // what the client asked for (absolute, normal)
  std::string dir;      // the directory inotify watches (the path, or its parent)
  std::string only;     // a file's (or a missing path's) name in `dir`; "" = all
  std::set<std::string> changed;
  int64_t first_ms = 0;  // when the oldest unsent change came
};

struct fs_watcher_state {
  static inline const char* name = "fs_watcher";
  int fd = -1;  // the inotify descriptor
  fs_change_sink sink;
  std::map<std::string, fs_watch_entry> watches;  // by watch id
  uint64_t tick = 0;                              // the live tick's generation
  bool ticking = false;
  ~fs_watcher_state();
};

fs_watcher_actor::behavior_type fs_watcher(fs_watcher_actor::stateful_pointer<fs_watcher_state> self,
                                           fs_change_sink sink);

}  // namespace parley::files
