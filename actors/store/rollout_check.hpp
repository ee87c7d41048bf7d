#pragma once
// One rollout's damage, and what can be saved from it (`parley store check`).
//
// A rollout is unreadable when the reader refuses it whole (no session
// metadata first, corrupt zstd, an empty file) and damaged when the reader
// reads it but skips lines (a line that is not a JSON object: a hole of
// garbage bytes, a torn last line; zstd data cut short). Repairing keeps
// every line that is a JSON object, in order, behind session metadata (moved
// to the front, or rebuilt from the file name and the records when it is
// gone), so a hole costs the records in it and never the thread.

#include <caf/expected.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace parley::store {

/// One thing wrong with a rollout, or (from store_check) with the index.
struct finding {
  enum class kind { unreadable, damaged, index };
  kind what = kind::damaged;
  /// The rollout's path; for index findings the thread id.
  std::string subject;
  /// The line (from 1) or, with `last_line`, the run of lines it concerns;
  /// 0 for the whole file.
  size_t line = 0;
  size_t last_line = 0;
  std::string reason;
};

/// One greppable line: "damaged P:7: not JSON", "damaged P:7-9: not JSON (3
/// lines)", "unreadable P: corrupt zstd data: ...", "index ID: ...".
std::string to_string(const finding& f);

/// What the check of one rollout found, and the rollout made of what it holds.
struct rollout_scan {
  /// In the order of the file; empty when the rollout is sound.
  std::vector<finding> findings;
  /// The thread id of its session metadata when the reader can read it.
  std::string thread_id;
  /// A valid rollout's lines holding every line that is a JSON object,
  /// session metadata first; empty when nothing can be saved (the file could
  /// not be read, or its name holds no thread id).
  std::vector<std::string> salvaged;
  /// Lines left out of `salvaged` (not JSON objects, a torn last line).
  size_t dropped = 0;
  /// The session metadata was written anew or its id taken from the name.
  bool meta_rebuilt = false;

  bool sound() const { return findings.empty(); }
  /// The reader refuses the whole file.
  bool unreadable() const;
};

/// Checks a rollout's (decompressed) bytes. `path` names it in findings and
/// gives the thread id and creation time when the metadata must be rebuilt.
rollout_scan scan_rollout_text(const std::string& text, const std::string& path);

/// Reads the rollout at `path` (a .zst is decompressed as far as it goes)
/// and checks it.
rollout_scan scan_rollout(const std::string& path);

/// Replaces the rollout at `path` by `scan.salvaged` (compressed again for a
/// .zst): written to a temp file, fsync'ed, renamed over it, the directory
/// fsync'ed. The damaged original stays beside it as
/// `<path>.damaged-<now_unix_s>`, which no listing takes for a rollout.
/// Returns that path.
caf::expected<std::string> repair_rollout(const std::string& path, const rollout_scan& scan,
                                          int64_t now_unix_s);

}  // namespace parley::store
