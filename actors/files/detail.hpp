#pragma once
// What the files of file_ops.hpp share; not part of its API.

#include <sys/stat.h>

#include <optional>
#include <string>

#include "actors/files/roots.hpp"

namespace parley::files::detail {

/// Writes all of `data`, retrying on EINTR; 0 or an errno.
int write_all(int fd, const std::string& data);

/// Copies the rest of `from` to `to`; 0 or an errno.
int copy_fd(int from, int to);

/// Why a file with `st` will not be read (fs/readFile) or copied (fs/copy):
/// not a regular file, or hard-linked. nullopt: it may be.
std::optional<failure> unreadable(const std::string& shown, const struct stat& st,
                                  const char* method);

/// `dir` + "/" + `name` ("/" + name under the root directory).
std::string join(const std::string& dir, const std::string& name);

}  // namespace parley::files::detail
