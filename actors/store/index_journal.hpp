#pragma once
// The index's journal: which rollouts changed since the index last said what
// they hold. The index is brought up to date behind the appends (rollout_io
// reports each batch); a process killed before a report lands leaves rows
// that lag their files. Rather than visit every rollout at the next start
// to find those, each I/O actor writes a rollout's path here before it first
// changes the file in a generation, and the index deletes a generation once
// it has committed the report that covers it. A start reads the journals
// left behind (only a killed process leaves any) and checks just those paths.
//
// Files: HOME/parley-index.journal/<process stamp>.<shard>.<generation>, one
// path a line. A process never touches another's stamp while it runs, so a
// start can take the files of earlier processes while its own I/O actors
// already write theirs.
//
// Not thread-safe: one owner (an I/O actor) uses it.

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace parley::store {

class index_journal {
 public:
  /// Writes under `dir` (created when first needed) as `<stamp>.<shard>.N`.
  index_journal(std::string dir, std::string stamp, int shard);
  ~index_journal();
  index_journal(const index_journal&) = delete;
  index_journal& operator=(const index_journal&) = delete;

  /// Records that `path` is about to change, once per generation; before the
  /// change is written (so a killed process leaves it named). False when the
  /// journal could not be written: the change must then be found otherwise
  /// (the caller marks the path so a start rereads it; see rollout_io).
  bool note(const std::string& path);

  /// Makes what was noted durable (before the rollouts' own sync).
  void sync();

  /// Paths noted in the current generation.
  size_t noted() const { return noted_.size(); }

  /// Ends the current generation: its file's name (to be deleted once the
  /// index has committed everything before it), or "" when nothing was noted.
  std::string rotate();

 private:
  bool open();

  std::string dir_;
  std::string prefix_;  // "<stamp>.<shard>."
  uint64_t generation_ = 0;
  int fd_ = -1;
  bool unsynced_ = false;
  std::unordered_set<std::string> noted_;
};

/// The journal folder under a home.
std::string journal_dir(const std::string& home);

/// A stamp no earlier process of this home used (time and pid).
std::string journal_stamp();

/// Journal files under `dir` not written by `own_stamp`'s process.
std::vector<std::string> left_journals(const std::string& dir, const std::string& own_stamp);

/// The paths a journal file names (a torn last line is dropped).
std::vector<std::string> read_journal(const std::string& file);

}  // namespace parley::store
