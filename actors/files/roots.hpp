#pragma once
// Which paths a connection's fs/* requests may reach, and how they are
// opened without leaving them.
//
// A connection may see the cwds and writable roots of its threads and the
// server's --cwd; parley's own home never, even where a root contains it.
// A request names an absolute path; locate() finds the root it lies under
// (lexically, after normalising "." and ".."), and every open goes through
// the root's descriptor with openat2's RESOLVE_BENEATH (one O_NOFOLLOW
// component at a time where the kernel lacks it, as actors/patch/ does), so
// a symlink, a "..", or a rename racing the request cannot lead outside.
// What was opened is then checked against the home by the descriptor's own
// path (/proc/self/fd), not by the name that was asked for.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/patch/beneath.hpp"

namespace parley::files {

using patch::beneath::unique_fd;

/// Why a request failed, as its JSON-RPC error: Codex answers a bad request
/// with -32600 and an I/O failure with -32603.
struct failure {
  int code = -32603;
  std::string message;
  int os_errno = 0;  // the OS error behind it, if any
};

constexpr int invalid_request = -32600;
constexpr int internal_error = -32603;

/// "No such file or directory (os error 2)", as Codex words an I/O error.
std::string os_error(int err);

/// "`PATH`: No such file or directory (os error 2)".
failure io_failure(const std::string& shown, int err);

/// A path inside one of the roots.
struct located {
  std::string root;      // the root, absolute and normal
  std::string relative;  // beneath it ("" for the root itself)
  std::string shown;     // the absolute, normal path, for messages and answers
};

class root_set {
 public:
  root_set() = default;
  explicit root_set(std::string home) { set_home(std::move(home)); }

  /// Adds a directory (absolute; ignored otherwise) as it is written and as
  /// it resolves, so a client naming either form is understood.
  void add(const std::string& dir);
  void set_home(std::string home);

  const std::vector<std::string>& roots() const { return roots_; }
  const std::vector<std::string>& home_forms() const { return home_; }

  /// The root `path` lies under (the deepest), or why it may not be used.
  std::variant<located, failure> locate(const std::string& path) const;

  /// Whether the absolute, normal `path` is the home or inside it.
  bool in_home(const std::string& path) const;
  /// Whether the home lies inside `path` (or is it).
  bool holds_home(const std::string& path) const;

 private:
  std::vector<std::string> roots_;
  std::vector<std::string> home_;  // as given and as it resolves
};

/// `path` made absolute-normal: "." and ".." folded, no trailing slash.
/// nullopt for a relative path.
std::optional<std::string> normal_path(const std::string& path);

/// Whether `inner` is `outer` or lies under it (both absolute and normal).
bool is_within(const std::string& inner, const std::string& outer);

/// The path the kernel gives for an open descriptor ("" if unknown).
std::string path_of_fd(int fd);

/// Opens `at.relative` beneath `at.root` with `flags` (O_NOFOLLOW in flags
/// refuses a final symlink). A resolution that leaves the root fails with
/// EXDEV (or ELOOP on the component walk). -1 with errno on failure.
unique_fd open_beneath(const located& at, int flags);

/// Opens what `at` names, following symlinks that stay inside the roots: a
/// symlink that leaves its root but lands in another root is followed into
/// that one. The descriptor is checked against the home. On failure the
/// failure says why (outside the roots, in the home, or the OS error).
std::variant<unique_fd, failure> open_confined(const root_set& roots, const located& at,
                                               int flags);

/// The directory holding `at` (opened beneath the root) and the last name;
/// fails for a root itself (it has no parent inside the roots).
struct parent_dir {
  unique_fd dir;
  std::string name;
  std::string real;  // the directory's real path (from its descriptor)
};
std::variant<parent_dir, failure> open_parent(const root_set& roots, const located& at);

/// The failure for an open that left the roots or met the home.
failure outside_failure(const std::string& shown);
failure home_failure(const std::string& shown);

}  // namespace parley::files
