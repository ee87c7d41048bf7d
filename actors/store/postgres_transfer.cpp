#include "actors/store/postgres_transfer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "actors/core/errors.hpp"
#include "actors/store/pg_blocking.hpp"
#include "actors/store/postgres_rows.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"

namespace parley::pg {

namespace postgres_transfer_detail {

transfer_report transfer_failed(std::string why) { return {false, std::move(why)}; }

/// Writes `content` to `path` through a temporary file, synced, then renamed.
std::optional<std::string> write_atomically(const std::string& path, const std::string& content) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot write " + tmp + ": " + std::strerror(errno);
  size_t done = 0;
  while (done < content.size()) {
    auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return "cannot write " + tmp + ": " + why;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return "cannot sync " + tmp + ": " + why;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return "cannot rename " + tmp + " to " + path + ": " + why;
  }
  return std::nullopt;
}

}  // namespace postgres_transfer_detail

using namespace postgres_transfer_detail;

transfer_report export_thread(const std::string& conninfo, const std::string& thread_id,
                              const std::string& out_file, const std::string& codex_home) {
  std::string why;
  auto c = connect_blocking(conninfo, why);
  if (!c) return transfer_failed(why);
  // One snapshot: the thread's lines as they stand at one moment.
  if (!exec(c.get(), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", why))
    return transfer_failed("cannot read the thread: " + why);
  auto found = exec_params(c.get(), "SELECT created_at FROM threads WHERE id=$1", {thread_id}, why);
  if (!found) return transfer_failed("cannot read the thread: " + why);
  if (PQntuples(found.get()) == 0) return transfer_failed("no thread " + thread_id + " in the database");
  int64_t created_at = std::stoll(PQgetvalue(found.get(), 0, 0));
  auto lines = exec_params(
      c.get(), "SELECT line::text FROM thread_lines WHERE thread_id=$1 ORDER BY seq", {thread_id},
      why);
  if (!lines) return transfer_failed("cannot read the thread: " + why);
  std::string content;
  int n = PQntuples(lines.get());
  for (int i = 0; i < n; ++i) {
    content += PQgetvalue(lines.get(), i, 0);
    content += '\n';
  }
  exec(c.get(), "COMMIT", why);
  std::string path = out_file;
  if (path.empty())
    path = codex_home + "/" + store::rollout_relative_path(created_at, thread_id);
  if (auto problem = write_atomically(path, content)) return transfer_failed(*problem);
  return {true, "exported thread " + thread_id + " (" + std::to_string(n) + " lines) to " + path};
}

transfer_report import_rollout(const std::string& conninfo, const std::string& path) {
  bool torn = false;
  auto lines = store::read_rollout_lines(path, &torn);
  if (!lines) return transfer_failed(message_of(lines.error()));
  // The lines go in as they are (Codex's records parley does not read
  // included), except what is not a JSON object, which no reader takes.
  std::vector<std::string> kept;
  size_t skipped = 0;
  for (auto& line : *lines) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object())
      kept.push_back(std::move(line));
    else
      ++skipped;
  }
  if (kept.empty() && skipped > 0)
    return transfer_failed("no line of " + path + " is a rollout record (JSON objects)");
  auto thread = store::decode_rollout(kept, path);
  if (!thread) return transfer_failed(message_of(thread.error()));
  auto row = row_of(*thread, static_cast<int64_t>(kept.size()));
  row.listed = !thread->meta.turns.empty();
  std::string why;
  auto c = connect_blocking(conninfo, why);
  if (!c) return transfer_failed(why);
  auto insert = insert_thread(row);
  auto append = append_lines(row.meta.id, 0, kept);
  if (!exec(c.get(), "BEGIN", why)) return transfer_failed("cannot import: " + why);
  auto exists = exec_params(c.get(), "SELECT 1 FROM threads WHERE id=$1", {row.meta.id}, why);
  if (exists && PQntuples(exists.get()) > 0) {
    exec(c.get(), "ROLLBACK", why);
    return transfer_failed("the database already has thread " + row.meta.id);
  }
  if (!exists || !exec_params(c.get(), insert.sql, insert.params, why)
      || !exec_params(c.get(), append.sql, append.params, why) || !exec(c.get(), "COMMIT", why)) {
    std::string rollback_why;
    exec(c.get(), "ROLLBACK", rollback_why);
    return transfer_failed("cannot import " + path + ": " + why);
  }
  std::string note;
  if (skipped) note += ", " + std::to_string(skipped) + " line(s) that were not JSON objects left out";
  if (torn) note += ", a torn last line left out";
  return {true, "imported thread " + row.meta.id + " (" + std::to_string(kept.size()) + " lines, "
                    + std::to_string(thread->meta.turns.size()) + " turns" + note + ") from " + path};
}

}  // namespace parley::pg
