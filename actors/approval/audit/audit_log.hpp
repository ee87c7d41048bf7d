#pragma once
// The approval audit log: an append-only JSONL file in which every line
// carries the SHA-256 of the previous line's exact bytes, so an edited,
// deleted, reordered or inserted line breaks the chain and verify() finds it.
//
// A line is one JSON object, keys in this order:
//   {"seq":12,"ts":"2026-11-21T08:00:00.123Z","event":"decided",
//    <the record's fields, sorted by key>,"prev":"<64 hex digits>"}
// seq counts lines from 1 (seq == line number), and the first line's prev is
// 64 zeros. Pure C++17 and POSIX: no CAF, no logging, no exceptions escape.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "actors/approval/audit/sha256.hpp"

namespace parley::audit {

/// The prev of the first line.
inline constexpr std::string_view genesis_prev
    = "0000000000000000000000000000000000000000000000000000000000000000";

/// One event of an approval's lifecycle.
struct record {
  /// requested | decided | timed_out | cancelled | ...; never empty.
  std::string event;
  /// A JSON object (or null) of what the event is about: approval, thread,
  /// turn, item, stage, decision, latency_ms, ... It must not use the keys
  /// the log writes itself: seq, ts, event, prev.
  nlohmann::json fields = nlohmann::json::object();
};

struct audit_options {
  /// fdatasync after every line: an appended line survives a power loss.
  /// Without it a crash of the process alone still loses nothing.
  bool fsync = false;
  /// Unix time in milliseconds for "ts"; the system clock when empty. Tests
  /// pass a fixed clock.
  std::function<std::int64_t()> now_ms;
};

struct open_result;

/// The writing end. Holds an exclusive flock on the file while open, so two
/// writers can't fork the chain. Not thread-safe: give it one owner.
class audit_log {
 public:
  /// Opens `path` for appending, creating it if missing, and continues the
  /// chain from its last line. Only the last line is read (verify() checks
  /// the rest). A last line without its newline is the remains of a write
  /// that never finished (append writes a line and its newline at once, and
  /// reported it as failed): open cuts it off and returns its bytes in
  /// `torn_tail`, for the caller to log. Fails if the file is locked by
  /// another audit_log or its last complete line is not an audit record.
  static open_result open(const std::string& path, audit_options options = {});

  audit_log(audit_log&& other) noexcept;
  audit_log& operator=(audit_log&& other) noexcept;
  audit_log(const audit_log&) = delete;
  audit_log& operator=(const audit_log&) = delete;
  ~audit_log();

  /// Writes `r` as the next line with one write(). Returns why not, or
  /// nullopt once the line is in the file (and on disk, with fsync). A
  /// failed append leaves the file as it was; if even that fails, every
  /// later append fails too until the log is reopened (which repairs it).
  std::optional<std::string> append(const record& r);

  /// The seq the next line gets (1 for an empty log).
  std::uint64_t next_seq() const { return next_seq_; }

  /// SHA-256 hex of the last line (genesis_prev for an empty log): the prev
  /// of the next line. Kept elsewhere, it lets verify() catch an edit to the
  /// last line or a cut at the end, which the chain alone can't see.
  const std::string& head() const { return head_; }

 private:
  audit_log(int fd, audit_options options, std::uint64_t size, std::uint64_t next_seq,
            std::string head);

  int fd_ = -1;
  audit_options options_;
  std::uint64_t size_ = 0;  // bytes in the file, to roll a failed write back
  std::uint64_t next_seq_ = 1;
  std::string head_;
  bool broken_ = false;  // a failed write could not be rolled back
};

/// What audit_log::open returns: a log, or why not.
struct open_result {
  std::optional<audit_log> log;
  /// Why `log` is empty.
  std::string error;
  /// The bytes open() cut off after the last newline; empty if none.
  std::string torn_tail;

  explicit operator bool() const { return log.has_value(); }
};

struct verify_report {
  bool ok = false;
  /// Lines in the file (an unterminated tail counts as one).
  std::uint64_t lines = 0;
  /// 1-based line where the chain first breaks; empty when ok, or when the
  /// file can't be read.
  std::optional<std::uint64_t> first_bad_line;
  /// What is wrong, for a human; empty when ok.
  std::string reason;
  /// SHA-256 hex of the last line checked before any break (genesis_prev if
  /// none): when ok, the log's head.
  std::string head{genesis_prev};
};

/// Recomputes the chain of the log at `path` (streaming; the file is not
/// changed). Catches a line that is not JSON or not a record, a seq that is
/// not its line number (a line deleted, inserted or moved), a prev that is not
/// the previous line's hash (a line edited), and an unterminated last line.
/// A single edited line is reported as itself: when line k's prev doesn't
/// match line k-1, line k+1 tells whether line k is as written (so k-1 was
/// edited) or not (so k's prev was). The last line has nothing after it:
/// pass the `expected_head` kept from audit_log::head() to check it too;
/// otherwise an edit to it, or a cut after any line, goes unnoticed.
verify_report verify(const std::string& path, std::string_view expected_head = {});

}  // namespace parley::audit
