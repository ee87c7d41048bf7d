#pragma once
// The local store: one append-only JSONL rollout per thread under the home
// folder, in the Codex rollout format, plus a SQLite index for list/read.
//
//   local_store (front)   routes requests; knows every thread touched in
//                         this process (path, metadata, written yet?)
//   rollout_io  x N       detached: blocking file I/O (append + fsync, read,
//                         archive/unarchive with zstd); a thread's file is
//                         always handled by the same one
//   thread_index_actor    detached: owns the SQLite index; brings it up to
//                         date with the rollouts on start
//
// No conversation ever waits on disk: they wait for an acknowledgement
// message, and only their own events queue behind it.

#include <sys/stat.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/core/config.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/store/thread_index.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::store::index_entry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::store::list_query)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::store::list_page)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<parley::store::pending_entry>)

namespace parley::store {

/// What an I/O actor tells the index about one rollout it changed: the
/// thread's entry when the store gave a new one, and the file as it is after
/// the writes the entry (or the row already there) describes.
struct file_report {
  std::string path;
  bool has_entry = false;
  index_entry entry;
  /// The row describes the file as stat'ed below; false while records of it
  /// change what the row says and no new entry came yet (mid-turn), or wait
  /// for the disk: the row's size is then -1 and a start after a crash
  /// reads the file again.
  bool settled = false;
  int64_t size = -1;
  int64_t mtime_ns = 0;
  int64_t inode = 0;
  /// Only read (a thread loaded): nothing changes, but retention must now
  /// leave this thread alone.
  bool read_only = false;
};

/// One batch of reports, committed together; then the journal file
/// `retire` (index_journal), whose changes are all reported, is deleted.
struct index_report {
  std::vector<file_report> files;
  std::string retire;
};

}  // namespace parley::store

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::store::index_report)

namespace parley::store {

using rollout_io_actor = caf::typed_actor<
    // Append lines to a rollout (creating it): synced when asked; the next
    // flag says they open a turn or a thread (see rollout_writer); the last
    // that the thread's index entry, as last put, describes the file after
    // them (see file_report::settled).
    caf::replies_to<atom::append, std::string, std::vector<std::string>, bool, bool, bool>::with<
        atom::ok>,
    // A thread's new index entry, for the index with the report of its
    // file; `settled`: it describes the file as it is now (no append follows).
    caf::reacts_to<atom::put, index_entry, bool>,
    // Its own timer: report what changed to the index.
    caf::reacts_to<atom::put>,
    // Write, sync and report everything, then retire the journal (the
    // store's orderly stop).
    caf::replies_to<atom::shutdown>::with<atom::ok>,
    // Read and decode a rollout.
    caf::replies_to<atom::load, std::string>::with<stored_thread>,
    // Move a rollout (compressing into / decompressing out of archived_sessions).
    caf::replies_to<atom::archive, std::string, std::string>::with<atom::ok>,
    // Delete a rollout (thread/delete): closed, unlinked, its folder synced.
    caf::replies_to<atom::erase, std::string>::with<atom::ok>,
    // thread/revert: rewrite a rollout without a turn and those after it
    // (closed first, replaced whole); the thread read back.
    caf::replies_to<atom::revert, std::string, std::string>::with<stored_thread>,
    // Everything appended before is written and synced.
    caf::replies_to<atom::flush>::with<atom::ok>,
    // Write what waits for the disk (the actor's own timer).
    caf::reacts_to<atom::retry>>;

using index_actor
    = caf::typed_actor<caf::reacts_to<atom::put, index_report>,  // from an I/O actor
                       // Answered once everything sent to it before is committed.
                       caf::replies_to<atom::flush>::with<atom::ok>,
                       // Its own: the next chunk of a rebuild.
                       caf::reacts_to<atom::open>,
                       // Its own: retention's next round (--prune-older-than).
                       caf::reacts_to<atom::timeout>,
                       caf::replies_to<atom::get, std::string>::with<index_entry>,
                       caf::replies_to<atom::list, list_query>::with<list_page>,
                       caf::replies_to<atom::pending>::with<std::vector<pending_entry>>,
                       // Drop a thread's entry (thread/delete); ok once it is gone.
                       caf::replies_to<atom::erase, std::string>::with<atom::ok>,
                       caf::reacts_to<atom::retry>>;  // its own timer: write what failed

/// A thread this process has touched.
struct thread_file {
  std::string path;
  protocol::thread meta;  // no turns
  bool on_disk = false;   // its session metadata is written (with thread/start)
  bool listed = false;    // in the index: once it has a turn (as Codex lists them)
  bool archived = false;
  /// The index entry last put describes the thread as its records so far
  /// do (see file_report::settled).
  bool entry_current = true;
  /// The last turn's action that has not ended, as the index shows it: 0
  /// none, else 1 + its phase; its item and deadline. (Kept this small: a
  /// store that knows a million waiting threads holds this for each.)
  int pending = 0;
  std::string pending_item;
  int64_t deadline_ms = 0;
};

struct local_store_state {
  static inline const char* name = "local_store";
  std::shared_ptr<const runtime_config> config;
  std::shared_ptr<runtime_telemetry> telemetry;  // its store health
  std::vector<rollout_io_actor> io;
  index_actor index;
  std::unordered_map<std::string, thread_file> files;
  /// Where the index said a thread's rollout is, when a tenant check asked
  /// (a request naming the thread follows it): the next locate of that
  /// thread takes it instead of asking the index again. One use each,
  /// bounded.
  std::unordered_map<std::string, std::string> located;
  bool sealed = false;  // the server is going away: no more appends
  bool closing = false;  // the orderly stop: reports committed, journals retired
};

store_actor::behavior_type local_store(store_actor::stateful_pointer<local_store_state> self,
                                       std::shared_ptr<const runtime_config> config,
                                       std::shared_ptr<runtime_telemetry> telemetry);

/// The index entry for a stored thread at `path`; with the file as it is
/// now (stat'ed) when `stat_file`.
index_entry entry_for(const stored_thread& t, const std::string& path, bool stat_file = true);

/// A file's modification time in nanoseconds.
int64_t mtime_ns(const struct stat& sb);

/// Whether index entry `e` says what the rollout at `path`, stat'ed as `sb`,
/// holds now (same path, size, modification time and inode): nothing to read.
bool entry_describes(const index_entry& e, const std::string& path, const struct stat& sb);

/// Brings the index in line with the rollouts under `home`: new or changed
/// files are (re)indexed, vanished ones dropped. Returns how many rollouts
/// were (re)read. Visits every file: a rebuild's work.
size_t sync_index(thread_index& index, const std::string& home);

/// What a start after a crash does instead: only the rollouts the journals
/// name (each stat'ed; read again when it is not what its row says, dropped
/// when gone). Returns how many were read.
size_t sync_journaled(thread_index& index, const std::vector<std::string>& paths);

/// Reads the rollout at `path` into the index (or drops its row when it has
/// no turn, or is gone). True when it was read.
bool reindex_rollout(thread_index& index, const std::string& path);

/// `parley store reindex`: deletes the index and rebuilds it from the rollouts.
caf::expected<size_t> rebuild_index(const std::string& home);

/// The index file under a home.
std::string index_path(const std::string& home);

}  // namespace parley::store
