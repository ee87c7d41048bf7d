#pragma once
// What the files of apply_patch share; not part of its API (apply_patch.hpp
// is). parse.cpp reads the patch grammar, match.cpp applies hunks to content,
// diff.cpp writes unified diffs, plan.cpp resolves paths against the writable
// roots, write.cpp writes beneath them, file_io.cpp holds the POSIX reads and
// writes; apply_patch.cpp ties them together.

#include "actors/patch/apply_patch.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace parley::patch::detail {

// -- text helpers -------------------------------------------------------------

constexpr const char* whitespace = " \t\r\n\v\f";

inline std::string_view rtrim(std::string_view s) {
  auto end = s.find_last_not_of(whitespace);
  return end == std::string_view::npos ? std::string_view{} : s.substr(0, end + 1);
}

inline std::string_view trim(std::string_view s) {
  auto begin = s.find_first_not_of(whitespace);
  return begin == std::string_view::npos ? std::string_view{} : rtrim(s.substr(begin));
}

// -- file I/O (file_io.cpp) ---------------------------------------------------

/// strerror-like text for an errno value.
std::string describe(int err);

/// Reads the rest of `fd` and closes it; nullopt with `err` set on failure.
std::optional<std::string> read_fd(int fd, int& err);

/// Reads a whole file; nullopt with `err` set on failure.
std::optional<std::string> read_all(const std::string& path, int& err);

/// Writes all of `data` to `fd`, retrying on EINTR.
bool write_all(int fd, const std::string& data);

// -- applying hunks in memory (match.cpp) -------------------------------------

/// Applies an Update File's hunks to `original`. Each hunk is searched from
/// where the previous one ended, so hunks must be in file order (as in Codex).
result<std::string> apply_hunks(const std::string& original, const file_patch& f);

}  // namespace parley::patch::detail
