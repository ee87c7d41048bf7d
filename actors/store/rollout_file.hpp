#pragma once
// Rollout files on disk: where they live under the home folder, how explicit
// paths are validated before any read, reading plain and zstd-compressed
// rollouts, and the home lock.

#include <caf/expected.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/store/file_ops.hpp"

namespace parley::store {

/// `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl` (UTC), relative to home.
std::string rollout_relative_path(int64_t created_unix_s, const std::string& id);

/// Validates a path a client gave before anything reads it: it must exist and
/// be a regular file. Errors carry Codex's wording ("failed to resolve rollout
/// path `<p>`: path is a directory" / "file does not exist").
caf::error validate_rollout_path(const std::string& path);

/// The rollout of thread `id` under sessions/ or archived_sessions/ (plain or
/// .zst; regular files only), found by scanning file names.
std::optional<std::string> find_rollout(const std::string& home, const std::string& id);

/// Every rollout file under `dir` (recursively), regular files only.
std::vector<std::string> list_rollouts(const std::string& dir);

/// What zstd data decompressed to: everything before an error is kept.
struct zstd_text {
  std::string text;
  std::string error;       // why decompressing stopped early; empty if it did not
  bool cut_short = false;  // no error, but the data ends inside a frame
};
zstd_text decompress_zstd(const std::string& data);

/// A rollout's bytes (decompressing .zst; data cut short inside a frame
/// gives what it holds). The path is not validated.
caf::expected<std::string> read_rollout_bytes(const std::string& path);

/// A rollout's bytes cut into lines. A last line that is torn (no trailing
/// newline and not valid JSON) is dropped and reported in `torn`.
std::vector<std::string> split_rollout_lines(const std::string& data, bool* torn = nullptr);

/// The lines of a rollout (decompressing .zst). A last line that is torn (no
/// trailing newline and not valid JSON) is dropped and reported in `torn`.
caf::expected<std::vector<std::string>> read_rollout_lines(const std::string& path, bool* torn = nullptr);

/// Makes the end of an open rollout whole before anything is appended to it:
/// a last line cut short by a crash (no trailing newline, not valid JSON) is
/// cut off, as Codex does, so the next record does not glue onto it; one
/// that is valid JSON only gets its newline. Nothing else in the file
/// changes; the next record's sync covers it.
caf::error repair_torn_tail(file_ops& ops, int fd, const std::string& path);

/// `content` compressed with zstd (one frame).
caf::expected<std::string> compress_zstd(const std::string& content);

/// Writes `lines` compressed with zstd to `dst` (atomically: temp file + rename).
caf::error write_compressed(const std::string& dst, const std::string& content);

/// Whether the thread id in a rollout file name (…-<uuid>.jsonl[.zst]) is `id`.
std::optional<std::string> id_from_file_name(const std::string& path);

/// Whether `path` names a zstd-compressed (archived) rollout.
bool is_zstd(const std::string& path);

/// Holds an exclusive lock on `<home>/parley.lock` for the process's life.
class home_lock {
 public:
  /// Fails with a clear message if another process holds it.
  static caf::expected<home_lock> acquire(const std::string& home);
  home_lock(home_lock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  home_lock& operator=(home_lock&&) = delete;
  ~home_lock();

 private:
  explicit home_lock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace parley::store
