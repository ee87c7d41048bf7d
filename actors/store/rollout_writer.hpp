#pragma once
// Appends to rollout files (pure: no actors), keeping the store's promise
// when the disk fails: a record is acknowledged only once it is written (and
// synced, when asked), and a file never gets a record after one that failed.
//
// A write that fails (ENOSPC, EIO, EROFS, ...) is cut back off the file and
// the record waits, with every later record of that file behind it, for
// retry() to write them in order once the disk takes them again. A sync that
// fails rewrites the file from its last synced length: what was written since
// waits again. Waiting records are capped (`limits::backlog_bytes`): past the
// cap a file's waiting records fail, and the file takes nothing more until a
// record that opens a turn or a thread (so a thread loses at most the turn in
// flight, never its history, and nothing after a hole is ever written).

#include <sys/types.h>

#include <caf/error.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/store/file_ops.hpp"

namespace parley::store {

/// What an append's sender hears: no error once its record is kept.
using append_done = std::function<void(caf::error)>;

class rollout_writer {
 public:
  struct limits {
    /// Bytes of records waiting for the disk, over every file.
    size_t backlog_bytes = size_t{32} << 20;
    /// Bytes written to a file since its last sync, kept to be written again
    /// if that sync fails; past this the file is synced at once.
    size_t unsynced_bytes = size_t{1} << 20;
    size_t max_open_files = 256;
  };

  explicit rollout_writer(std::shared_ptr<file_ops> ops);
  rollout_writer(std::shared_ptr<file_ops> ops, limits lim);
  ~rollout_writer();
  rollout_writer(const rollout_writer&) = delete;
  rollout_writer& operator=(const rollout_writer&) = delete;

  /// Appends `lines` to `path` (creating it and its folders). `sync`: `done`
  /// waits for the next flush(). `opens`: the record starts a turn or a
  /// thread, so a file that gave up its earlier records takes it.
  void append(const std::string& path, const std::vector<std::string>& lines, bool sync,
              bool opens, append_done done);

  /// Syncs every file written since the last flush and answers the appends
  /// that waited for it (a failed sync makes them wait for retry()).
  void flush();

  /// Whether an append waits for flush().
  bool needs_flush() const { return !dirty_.empty(); }

  /// Writes (and syncs) what waits for the disk, file by file, in order;
  /// when nothing waits but the disk refused last, writes a probe file
  /// beside the last file it refused. Returns whether the disk takes writes.
  bool retry();

  /// Whether records wait for the disk, or the last write failed and none
  /// has succeeded since; why the disk last refused.
  bool faulted() const { return waiting_files_ != 0 || refusing_ || cuts_pending_ != 0; }
  const std::string& fault() const { return fault_; }
  size_t waiting_bytes() const { return waiting_bytes_; }

  /// Whether everything appended to `path` is written (none of it waits
  /// for the disk, no cut is pending).
  bool settled(const std::string& path) const;

  /// Syncs and closes `path` (before it is moved); an error while any of its
  /// records still waits.
  caf::error close(const std::string& path);

 private:
  struct chunk {
    std::string data;
    append_done done;  // empty once answered
  };
  struct file {
    int fd = -1;
    off_t synced = 0;      // bytes known to be on disk
    off_t end = 0;         // bytes written
    off_t cut_to = -1;     // a failed sync: cut back to here before writing
    bool repaired = false; // its torn tail (a crash's) was looked at
    bool broken = false;   // gave up records: takes only one that opens
    bool dirty = false;    // written since the last flush
    std::deque<chunk> unsynced;  // written after `synced`
    size_t unsynced_bytes = 0;
    std::deque<chunk> waiting;   // refused by the disk, in order
    std::list<std::string>::iterator lru;
    bool in_lru = false;
  };

  caf::error open(const std::string& path, file& f);
  caf::error write_chunk(const std::string& path, file& f, const std::string& data);
  void wait(const std::string& path, file& f, chunk c, const caf::error& why);
  void give_up(const std::string& path, file& f);
  bool sync_file(const std::string& path, file& f);
  bool drain(const std::string& path, file& f);
  void close_fd(file& f);
  void touch(const std::string& path, file& f);
  void forget_if_idle(const std::string& path);
  void refused(const std::string& path, std::string why);
  void set_cut(file& f, off_t at);
  void clear_cut(file& f);
  void try_cut(const std::string& path, file& f);
  bool probe();

  std::shared_ptr<file_ops> ops_;
  limits limits_;
  std::unordered_map<std::string, file> files_;
  std::list<std::string> lru_;  // open files, most recent first
  size_t open_count_ = 0;
  std::vector<std::string> dirty_;  // written since the last flush
  size_t waiting_bytes_ = 0;
  size_t waiting_files_ = 0;
  std::string fault_;
  bool refusing_ = false;     // the last write or sync failed
  size_t cuts_pending_ = 0;   // files to cut back before anything else
  std::string refused_dir_;   // where: the probe is written there
};

/// "no space left on device": the reason an errno gives.
std::string reason_of(int err);

}  // namespace parley::store
