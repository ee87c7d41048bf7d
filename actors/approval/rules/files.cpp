// The file system side of rules: loading a rules directory, and appending
// the prefix rules a user grants ("accept with execpolicy amendment") to
// default.rules without ever leaving a torn file behind.

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include "actors/approval/rules/rules.hpp"

namespace parley::rules {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

/// The whole file; nullopt (errno set) when it can't be read.
std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return content.str();
}

/// Writes all of `data` to `fd`, retrying short writes.
void write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot write " + path);
    done += static_cast<size_t>(n);
  }
}

/// Replaces `path` with `content`: a reader sees the old or the new file,
/// never part of one, and after a crash the new file is either all there
/// or not at all.
void replace_file(const std::string& dir, const std::string& path, const std::string& content) {
  // Not *.rules, so load_dir never reads a temp file left by a crash.
  std::string temp = dir + "/.default.rules.XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0) fail("cannot create a temp file in " + dir);
  try {
    struct stat old {};
    // Keep the mode of the file being replaced; mkstemp creates 0600.
    auto mode = ::stat(path.c_str(), &old) == 0 ? old.st_mode & 07777 : 0644;
    if (::fchmod(fd, mode) != 0) fail("cannot chmod " + temp);
    write_all(fd, content, temp);
    if (::fsync(fd) != 0) fail("cannot fsync " + temp);
    if (::close(fd) != 0) {
      fd = -1;
      fail("cannot close " + temp);
    }
    fd = -1;
    if (::rename(temp.c_str(), path.c_str()) != 0) fail("cannot rename " + temp + " to " + path);
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  // The rename is durable only once the directory entry is on disk.
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) fail("cannot open " + dir);
  int rc = ::fsync(dir_fd);
  ::close(dir_fd);
  if (rc != 0) fail("cannot fsync " + dir);
}

/// Whether `existing` already holds exactly the allow rule for `prefix`.
bool already_allowed(const std::string& existing, const std::string& source,
                     const rule& wanted) {
  try {
    auto present = rule_set::parse(existing, source);
    for (auto& r : present.rules())
      if (r.what == rule::kind::prefix && r.verdict == decision::allow
          && r.pattern == wanted.pattern)
        return true;
    return false;
  } catch (const load_error&) {
    // A broken file still gets the amendment (loading it reports the real
    // error); it counts as present only if its canonical line is there.
    return existing.find(wanted.text()) != std::string::npos;
  }
}

}  // namespace

rule_set rule_set::load_dir(const std::string& rules_dir) {
  rule_set set;
  std::error_code ec;
  if (!fs::is_directory(rules_dir, ec)) return set;
  std::vector<std::string> names;
  for (auto& entry : fs::directory_iterator(rules_dir, ec)) {
    auto name = entry.path().filename().string();
    bool is_rules = name.size() > 6 && name.compare(name.size() - 6, 6, ".rules") == 0;
    if (is_rules && entry.is_regular_file(ec)) names.push_back(name);
  }
  if (ec) throw load_error(rules_dir, 0, 0, "cannot list: " + ec.message());
  std::sort(names.begin(), names.end());
  for (auto& name : names) {
    auto path = (fs::path{rules_dir} / name).string();
    auto text = read_file(path);
    if (!text) throw load_error(path, 0, 0, std::string{"cannot read: "} + std::strerror(errno));
    auto file = parse(*text, path);
    set.rules_.insert(set.rules_.end(), file.rules_.begin(), file.rules_.end());
  }
  return set;
}

bool append_prefix_rule(const std::string& rules_dir, const std::vector<std::string>& prefix) {
  if (prefix.empty()) throw std::invalid_argument("append_prefix_rule: empty prefix");
  rule wanted;
  wanted.what = rule::kind::prefix;
  wanted.verdict = decision::allow;
  for (auto& word : prefix) wanted.pattern.push_back({word});

  // Read-modify-replace is a critical section: two appends interleaved would
  // each write the file without the other's rule.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock{mutex};
  std::error_code ec;
  fs::create_directories(rules_dir, ec);
  if (ec) throw std::system_error(ec, "cannot create " + rules_dir);
  auto path = (fs::path{rules_dir} / "default.rules").string();
  std::string content;
  if (fs::exists(path, ec)) {
    auto text = read_file(path);
    if (!text) fail("cannot read " + path);
    content = std::move(*text);
  }
  if (already_allowed(content, path, wanted)) return false;
  if (!content.empty() && content.back() != '\n') content += '\n';
  content += wanted.text() + "\n";
  replace_file(rules_dir, path, content);
  return true;
}

std::string rules_dir_of(const std::string& home) { return home + "/rules"; }

}  // namespace parley::rules
