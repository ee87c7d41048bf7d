#include "actors/store/rollout_delete.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "actors/core/errors.hpp"

namespace parley::store {

caf::error delete_rollout(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return make_error(errc::internal,
                      "cannot delete " + path + ": " + std::string{std::strerror(errno)});
  // The unlink is durable once the folder that named the file is synced.
  auto dir = std::filesystem::path(path).parent_path().string();
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return caf::error{};  // the folder is gone too
    return make_error(errc::internal,
                      "cannot open " + dir + ": " + std::string{std::strerror(errno)});
  }
  int synced = ::fsync(fd);
  int why = errno;
  ::close(fd);
  if (synced != 0)
    return make_error(errc::internal, "cannot sync " + dir + ": " + std::string{std::strerror(why)});
  return caf::error{};
}

}  // namespace parley::store
