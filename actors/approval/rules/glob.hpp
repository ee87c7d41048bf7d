#pragma once
// Path globs for path rules, and the lexical path arithmetic they need.
// Pure: nothing here looks at the file system.

#include <optional>
#include <string>

namespace parley::rules {

/// Why `glob` is not a usable glob (empty, an unterminated `[` class, an
/// empty class), with the 0-based offset of the problem; nullopt when fine.
struct glob_problem {
  size_t offset;
  std::string message;
};
std::optional<glob_problem> check_glob(const std::string& glob);

/// Whether `glob` matches `path` segment by segment (both split on `/`):
/// `*` any run of characters but `/`, `?` one character but `/`, `[abc]`,
/// `[a-z]`, `[!abc]` (or `[^abc]`) a character class, and a segment that is
/// exactly `**` any number of whole segments, zero included. An empty path
/// has no segments.
bool glob_matches(const std::string& glob, const std::string& path);

/// `path` resolved against `cwd` when relative, with `.`, `..` and repeated
/// or trailing slashes removed, without touching the file system. `..` at
/// the root stays at the root.
std::string normalise_path(const std::string& path, const std::string& cwd);

/// `path` relative to `dir` when `path` is `dir` itself ("") or lies under
/// it; nullopt otherwise. Both must be normalised.
std::optional<std::string> relative_under(const std::string& path, const std::string& dir);

}  // namespace parley::rules
