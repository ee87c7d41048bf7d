#pragma once
// File-system steps that cannot leave a root directory, for apply_patch.
//
// plan() decides on what a path really names (real_path_of), but a symlink
// can be swapped in between that decision and the write. So the writes open
// their directory relative to the root's descriptor with openat2's
// RESOLVE_BENEATH (or, where the kernel lacks openat2, one O_NOFOLLOW
// component at a time) and then act on a single name in that directory
// (openat, linkat, renameat, unlinkat, none of which follow the last name).
// A path whose resolution would leave the root fails with EXDEV (openat2) or
// ELOOP/ENOTDIR (the component walk meets a symlink).

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace parley::patch::beneath {

/// Owns one file descriptor (-1: none; errno tells why the open failed).
class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
  unique_fd& operator=(unique_fd&& other) noexcept;
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd();

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept;

 private:
  int fd_ = -1;
};

/// What `path` (absolute, lexically normal) really names: its parent with
/// every symlink followed (up to the deepest ancestor that exists, the rest
/// appended as written), then its own name, which is not followed because
/// the writes replace or remove that name rather than write through it.
std::filesystem::path real_path_of(const std::filesystem::path& path);

/// Opens the directory `relative` (no "..", may be empty for the root
/// itself) beneath `root`. An empty `root` means unrestricted: `relative`
/// is taken from "/" and symlinks are followed as usual.
unique_fd open_dir(const std::string& root, const std::string& relative);

/// A directory make_dirs() created, so a rollback can remove it again.
struct created_dir {
  unique_fd parent;
  std::string name;
  std::string relative;  // beneath the root, for messages
};

/// Like open_dir(), creating the missing directories (mkdirat beneath the
/// root) and appending each to `created`, parents first. `fault(relative)`
/// returning true makes that mkdir fail with EIO (a test seam).
unique_fd make_dirs(const std::string& root, const std::string& relative,
                    std::vector<created_dir>& created,
                    const std::function<bool(const std::string&)>& fault);

namespace detail {
/// Test seam: resolve one O_NOFOLLOW component at a time, as on kernels
/// without openat2.
void force_component_walk(bool on);
}  // namespace detail

}  // namespace parley::patch::beneath
