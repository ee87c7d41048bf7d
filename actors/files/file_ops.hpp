#pragma once
// The fs/* methods of the Codex app-server protocol (v2) as plain blocking
// functions over a root_set: each decodes nothing and sends nothing; it
// takes the decoded params and returns the result's JSON or a failure.
// Run them off the actor scheduler (actors/files/file_worker.hpp).
//
// Beyond Codex (which reaches the whole host): every path is confined to the
// roots (roots.hpp), a file with more than one hard link is neither read nor
// copied (its other name may be a file outside the roots), a write replaces
// the name (a temp file renamed over it, as patches do) so it never writes
// through a hard link, and reads are capped.

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "actors/files/roots.hpp"

namespace parley::files {

using json = nlohmann::json;
using answer = std::variant<json, failure>;

/// The most fs/readFile reads and fs/writeFile writes (decoded bytes).
constexpr size_t max_file_bytes = size_t{16} << 20;

answer read_file(const root_set& roots, const std::string& path,
                 size_t cap = max_file_bytes);
answer write_file(const root_set& roots, const std::string& path,
                  const std::string& data_base64, size_t cap = max_file_bytes);
answer create_directory(const root_set& roots, const std::string& path, bool recursive);
answer get_metadata(const root_set& roots, const std::string& path);
answer read_directory(const root_set& roots, const std::string& path);
answer remove_path(const root_set& roots, const std::string& path, bool recursive, bool force);
answer copy_path(const root_set& roots, const std::string& source,
                 const std::string& destination, bool recursive);

/// Replaces `name` in `dir` with what `fill` writes to a temp file beside it
/// (fsync'ed, renamed over it; the original's permissions kept, else
/// `mode`). `fill` returns 0 or an errno. 0 or an errno.
int replace_file(int dir, const std::string& name, const std::function<int(int fd)>& fill,
                 mode_t mode = 0666);

}  // namespace parley::files
