#pragma once
// Parses and applies patches in the Codex `apply_patch` format, all files or
// none. Pure logic plus POSIX file I/O: no CAF, no logging, and no exception
// leaves these functions (failures come back as `patch::error`).
//
//   *** Begin Patch
//   *** Add File: path/new.txt
//   +line one
//   *** Update File: path/existing.txt
//   *** Move to: path/renamed.txt        (optional)
//   @@ optional anchor line, e.g. a function signature
//    context line
//   -removed line
//   +added line
//   *** End of File                      (optional: the hunk ends the file)
//   *** Delete File: path/old.txt
//   *** End Patch
//
// Typical use: parse() the model's text, plan() it against the thread's cwd
// (this reads the files and produces diffs for the approval request), then
// apply() the planned changes once approved.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace parley::patch {

/// Why parsing, planning or applying failed, as one line (or a few) a model
/// or a human can act on, e.g. "invalid patch: line 3: ...".
struct error {
  /// What kind of failure: a patch that reaches outside the writable roots
  /// is refused by policy (its item is declined), anything else failed.
  enum class kind { failed, outside_roots };
  std::string message;
  kind what = kind::failed;
  bool refused_by_policy() const { return what == kind::outside_roots; }
};

/// A value or an error; a minimal stand-in for C++23's std::expected so the
/// module stays CAF-free. value() on an error (or error() on a value) is a
/// programmer bug.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  result(patch::error err) : state_(std::in_place_index<1>, std::move(err)) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { return *std::get_if<0>(&state_); }
  const T& value() const& { return *std::get_if<0>(&state_); }
  T&& value() && { return std::move(*std::get_if<0>(&state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return std::get_if<0>(&state_); }
  const T* operator->() const { return std::get_if<0>(&state_); }

  const patch::error& error() const { return *std::get_if<1>(&state_); }

 private:
  std::variant<T, patch::error> state_;
};

/// What apply() returns on success: nothing but the fact.
using status = result<std::monostate>;

enum class change_kind {
  add,     // *** Add File
  update,  // *** Update File (optionally with *** Move to)
  remove,  // *** Delete File
};

/// One line of a hunk: ' ' context, '-' removed, '+' added.
struct hunk_line {
  char kind = ' ';
  std::string text;  // without the kind character
};

/// One "@@" section of an Update File: its context and removed lines are
/// located in the file and replaced by its context and added lines.
struct hunk {
  /// Text after each "@@ " header, in order. Each is searched for (forward)
  /// before the hunk's own lines, to say which function or class it is in.
  std::vector<std::string> anchors;
  std::vector<hunk_line> lines;
  bool end_of_file = false;  // "*** End of File": the old lines end the file
  size_t line = 0;           // 1-based line in the patch text

  std::vector<std::string> old_lines() const;  // context and removed, in order
  std::vector<std::string> new_lines() const;  // context and added, in order
};

/// One file section of a patch, as written.
struct file_patch {
  change_kind kind = change_kind::add;
  std::string path;                    // as written (relative or absolute)
  std::optional<std::string> move_to;  // update only
  std::string content;                 // add only: the whole new file
  std::vector<hunk> hunks;             // update only: at least one
  size_t line = 0;                     // 1-based line of the file header
};

struct parsed_patch {
  std::vector<file_patch> files;  // at least one
};

/// A planned change: everything needed to show it and to apply it.
struct file_change {
  change_kind kind = change_kind::add;
  std::string path;                    // as written in the patch
  std::optional<std::string> move_to;  // as written; update only
  std::string resolved_path;           // absolute, lexically normalised
  std::string resolved_move_to;        // ditto; empty unless a real move
  // Where apply() writes, fixed by plan(): the writable root each path
  // really lies in (symlinks resolved; empty: writes are unrestricted) and
  // the path beneath it. The write cannot leave that root.
  std::string root;
  std::string beneath_root;
  std::string move_root;
  std::string move_beneath_root;
  std::string new_content;             // add/update: the file afterwards
  std::string old_content;             // update/remove: the file before
  std::string unified_diff;            // this change as a unified diff
};

/// Parses patch text. Tolerates what Codex tolerates: blank lines around the
/// patch, whitespace around markers, CRLF line ends, a `<<'EOF'` heredoc
/// wrapper, and a first hunk without "@@". Errors name the line:
/// "invalid patch: line 3: ...".
result<parsed_patch> parse(const std::string& text);

/// Resolves every path against `cwd`, refuses paths outside all
/// `writable_roots` (empty means `cwd` only), lexically or once symlinks in
/// their directories are followed (a root of "/" leaves writes unrestricted), reads
/// the current files and applies the hunks in memory. Nothing is written.
/// Refuses an Add onto an existing file, a Move onto one, and two sections on
/// one file, except "Delete File" then "Add File", which becomes one update.
result<std::vector<file_change>> plan(const parsed_patch& patch, const std::string& cwd,
                                      const std::vector<std::string>& writable_roots);

/// Writes planned changes: all of them or none. Fails, changing nothing, if a
/// file changed since plan() read it. See write.cpp for the one window
/// (a crash in the middle of the final renames) where this cannot hold.
status apply(const std::vector<file_change>& changes);

/// parse() + plan() + apply(); returns the applied changes.
result<std::vector<file_change>> apply_patch(const std::string& text, const std::string& cwd,
                                             const std::vector<std::string>& writable_roots);

/// Unified diff (3 lines of context) from `old_content` to `new_content`
/// with "--- a/<path>" and "+++ b/<path>" headers (an absolute path loses
/// its leading '/'). Empty when equal.
std::string unified_diff(const std::string& path, const std::string& old_content,
                         const std::string& new_content);

/// As above with distinct names; nullopt stands for /dev/null (an added or
/// deleted file). With different names and equal content only the headers
/// are returned, so a pure rename is still visible.
std::string unified_diff(const std::optional<std::string>& old_path,
                         const std::optional<std::string>& new_path, const std::string& old_content,
                         const std::string& new_content);

namespace detail {

/// Test seam: called before each file-system step of apply() with the step's
/// name ("write", "backup", "commit") and path; returning true makes that step
/// fail as if the OS had refused it.
using fault_injector = std::function<bool(const std::string& step, const std::string& path)>;

status apply(const std::vector<file_change>& changes, const fault_injector& inject);

/// Finds `pattern` in `lines` at or after `start`: exact match first, then
/// ignoring trailing whitespace, then ignoring leading and trailing
/// whitespace, then also folding typographic dashes, quotes and spaces to
/// ASCII. With `at_end`, only the position ending the file is tried.
std::optional<size_t> seek(const std::vector<std::string>& lines,
                           const std::vector<std::string>& pattern, size_t start, bool at_end);

}  // namespace detail

}  // namespace parley::patch
