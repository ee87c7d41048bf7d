#include "actors/store/rollout_revert.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "actors/core/errors.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/rollout_json.hpp"

namespace parley::store {

namespace rollout_revert_detail {

using json = nlohmann::json;

/// The id of the turn `record` starts, or "".
std::string started_turn(const json& record) {
  if (rollout_json::str_of(record, "type", "") != "event_msg") return {};
  auto p = rollout_json::object_of(record, "payload");
  if (rollout_json::str_of(p, "type", "") != "task_started") return {};
  return rollout_json::str_of(p, "turn_id", "");
}

/// Whether `record` describes the thread rather than a turn: what a revert
/// keeps from the part it drops.
bool thread_level(const json& record) {
  auto type = rollout_json::str_of(record, "type", "");
  if (type == git_info_line_type) return true;
  if (type != "event_msg") return false;
  auto p = rollout_json::str_of(rollout_json::object_of(record, "payload"), "type", "");
  return p == "thread_name_updated" || p == "thread_goal_updated" || p == "thread_goal_cleared";
}

caf::error system_error(const std::string& what, const std::string& path) {
  return make_error(errc::internal, "cannot " + what + " " + path + ": " + std::strerror(errno));
}

caf::error write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("write", path);
    done += static_cast<size_t>(n);
  }
  return caf::error{};
}

caf::error sync_folder(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return system_error("open", dir);
  int synced = ::fsync(fd);
  auto err = synced != 0 ? system_error("sync", dir) : caf::error{};
  ::close(fd);
  return err;
}

}  // namespace rollout_revert_detail

caf::expected<std::vector<std::string>> reverted_lines(const std::vector<std::string>& lines,
                                                       const std::string& turn_id) {
  using namespace rollout_revert_detail;
  std::vector<std::string> kept;
  size_t cut = lines.size();
  size_t dropped = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto record = json::parse(lines[i], nullptr, false);
    bool object = !record.is_discarded() && record.is_object();
    auto started = object ? started_turn(record) : std::string{};
    if (cut == lines.size()) {
      if (i > 0 && !started.empty() && started == turn_id) {
        cut = i;
        ++dropped;
        continue;
      }
      kept.push_back(lines[i]);
    } else if (!started.empty()) {
      ++dropped;
    } else if (object && thread_level(record)) {
      kept.push_back(lines[i]);
    }
  }
  if (cut == lines.size()) return make_error(errc::invalid_request, "turn not found: " + turn_id);
  kept.push_back(encode_reverted(turn_id, dropped));
  return kept;
}

caf::error replace_rollout(const std::string& path, const std::vector<std::string>& lines) {
  using namespace rollout_revert_detail;
  namespace fs = std::filesystem;
  auto dir = fs::path(path).parent_path().string();
  // Hidden, and not named like a rollout: a crash before the rename leaves
  // nothing any listing picks up (the next revert of the thread reuses it).
  auto tmp = dir + "/.revert-" + fs::path(path).filename().string() + ".tmp";
  std::string content;
  for (const auto& l : lines) content += l + "\n";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return system_error("create", tmp);
  auto err = write_all(fd, content, tmp);
  if (!err && ::fsync(fd) != 0) err = system_error("sync", tmp);
  ::close(fd);
  if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = system_error("rename over", path);
  if (err) {
    ::unlink(tmp.c_str());
    return err;
  }
  return sync_folder(dir);
}

}  // namespace parley::store
