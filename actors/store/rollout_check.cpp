#include "actors/store/rollout_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "actors/core/errors.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/rollout_json.hpp"
#include "protocol/ids.hpp"
#include "protocol/json_codec.hpp"

namespace parley::store {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace rollout_json;

namespace {

/// A line that is a JSON object: kept by a repair.
struct record_line {
  size_t number = 0;
  std::string text;
  json value;
};

/// A line that is not: what the reader skips.
struct bad_line {
  size_t number = 0;
  std::string reason;
};

/// Adds `bad` to `out`, joining it to the run before it when the reason is
/// the same and no line lies between.
void add_bad(std::vector<finding>& out, const std::string& path, const bad_line& bad) {
  if (!out.empty()) {
    auto& last = out.back();
    if (last.what == finding::kind::damaged && last.reason == bad.reason
        && last.last_line + 1 == bad.number) {
      last.last_line = bad.number;
      return;
    }
  }
  out.push_back({finding::kind::damaged, path, bad.number, bad.number, bad.reason});
}

/// Unix seconds of the file name's `rollout-YYYY-MM-DDThh-mm-ss-…`; 0 if none.
int64_t created_from_file_name(const std::string& path) {
  auto name = fs::path(path).filename().string();
  std::tm tm{};
  if (std::sscanf(name.c_str(), "rollout-%4d-%2d-%2dT%2d-%2d-%2d", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec)
      != 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(::timegm(&tm));
}

bool is_session_meta(const json& record) {
  return str_of(record, "type") == "session_meta" && record.contains("payload")
         && record["payload"].is_object();
}

/// Session metadata for thread `id` made from what is left: the first
/// record's time (else the file name's), the cwd of the first turn_context.
std::string rebuilt_meta(const std::string& id, const std::string& path,
                         const std::vector<record_line>& records) {
  int64_t ms = 0;
  std::string cwd;
  for (auto& r : records) {
    if (ms == 0) ms = parse_rfc3339_ms(str_of(r.value, "timestamp"));
    if (cwd.empty() && str_of(r.value, "type") == "turn_context")
      cwd = str_of(object_of(r.value, "payload"), "cwd");
  }
  if (ms == 0) ms = created_from_file_name(path) * 1000;
  auto stamp = rfc3339_ms(ms);
  return protocol::dump_line(json{{"timestamp", stamp},
                                  {"type", "session_meta"},
                                  {"payload",
                                   {{"id", id},
                                    {"timestamp", stamp},
                                    {"cwd", cwd},
                                    {"originator", "parley"},
                                    {"cli_version", ""},
                                    {"source", "vscode"}}}});
}

/// `scan.salvaged`: the session metadata first (moved there, its id taken
/// from the file name, or rebuilt), then every other record in order.
void salvage(rollout_scan& scan, const std::string& path, std::vector<record_line>& records) {
  auto name_id = id_from_file_name(path);
  auto meta = std::find_if(records.begin(), records.end(), [](const record_line& r) {
    return is_session_meta(r.value) && !session_meta_problem(r.text);
  });
  if (meta == records.end())  // one without a valid id gets the file name's
    meta = std::find_if(records.begin(), records.end(),
                        [](const record_line& r) { return is_session_meta(r.value); });
  std::string meta_line;
  if (meta != records.end() && !session_meta_problem(meta->text)) {
    meta_line = meta->text;
  } else if (!name_id) {
    return;  // no thread to make it one of
  } else if (meta != records.end()) {
    meta->value["payload"]["id"] = *name_id;
    meta_line = protocol::dump_line(meta->value);
    scan.meta_rebuilt = true;
  } else {
    meta_line = rebuilt_meta(*name_id, path, records);
    scan.meta_rebuilt = true;
  }
  scan.salvaged.push_back(std::move(meta_line));
  for (auto i = records.begin(); i != records.end(); ++i)
    if (i != meta) scan.salvaged.push_back(std::move(i->text));
}

rollout_scan scan_text(const std::string& text, const std::string& path, bool whole_file_reported) {
  rollout_scan scan;
  std::vector<record_line> records;
  std::vector<bad_line> bad;
  // The line the reader takes for the session metadata: the first that is
  // not empty (a torn last line does not count).
  std::optional<size_t> first_line;
  std::optional<std::string> first_problem;
  size_t number = 0;
  for (size_t start = 0; start < text.size();) {
    ++number;
    auto end = text.find('\n', start);
    bool last = end == std::string::npos;
    auto line = text.substr(start, last ? std::string::npos : end - start);
    start = last ? text.size() : end + 1;
    if (line.empty()) continue;  // the reader skips empty lines
    auto value = json::parse(line, nullptr, false);
    bool torn = last && value.is_discarded();
    if (!torn && !first_line) {
      first_line = number;
      first_problem = session_meta_problem(line);
      // Not a JSON object where the metadata belongs: that finding says so.
      if (!value.is_object()) {
        ++scan.dropped;
        continue;
      }
    }
    if (value.is_discarded())
      bad.push_back({number, torn ? "torn last line (no newline, not JSON)" : "not JSON"});
    else if (!value.is_object())
      bad.push_back({number, "not a JSON object"});
    else
      records.push_back({number, std::move(line), std::move(value)});
  }
  scan.dropped += bad.size();

  if (!first_line && !whole_file_reported) {
    scan.findings.push_back({finding::kind::unreadable, path, 0, 0,
                             bad.empty() ? "the file is empty"
                                         : "the file holds no whole line, so no session metadata"});
  } else if (first_problem) {
    auto why = *first_problem;
    auto meta = std::find_if(records.begin(), records.end(), [](const record_line& r) {
      return is_session_meta(r.value) && !session_meta_problem(r.text);
    });
    if (meta != records.end() && meta->number != *first_line)
      why += " (it is on line " + std::to_string(meta->number) + ")";
    scan.findings.push_back({finding::kind::unreadable, path, *first_line, *first_line, why});
  } else if (first_line) {
    scan.thread_id = str_of(object_of(records.front().value, "payload"), "id");
  }
  for (auto& b : bad) add_bad(scan.findings, path, b);
  salvage(scan, path, records);
  return scan;
}

/// Writes `data` to `path` and syncs it; false with errno set on failure.
bool write_synced(const std::string& path, const std::string& data, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < data.size()) {
    auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      errno = e;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  bool ok = ::fsync(fd) == 0;
  int e = errno;
  ::close(fd);
  errno = e;
  return ok;
}

bool sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string to_string(const finding& f) {
  std::string out;
  switch (f.what) {
    case finding::kind::unreadable:
      out = "unreadable ";
      break;
    case finding::kind::damaged:
      out = "damaged ";
      break;
    case finding::kind::index:
      out = "index ";
      break;
  }
  out += f.subject;
  if (f.line != 0) out += ":" + std::to_string(f.line);
  if (f.last_line > f.line) out += "-" + std::to_string(f.last_line);
  out += ": " + f.reason;
  if (f.last_line > f.line) out += " (" + std::to_string(f.last_line - f.line + 1) + " lines)";
  return out;
}

bool rollout_scan::unreadable() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const finding& f) { return f.what == finding::kind::unreadable; });
}

rollout_scan scan_rollout_text(const std::string& text, const std::string& path) {
  return scan_text(text, path, false);
}

rollout_scan scan_rollout(const std::string& path) {
  auto unreadable = [&path](std::string why) {
    rollout_scan scan;
    scan.findings.push_back({finding::kind::unreadable, path, 0, 0, std::move(why)});
    return scan;
  };
  std::ifstream in{path, std::ios::binary};
  if (!in) return unreadable(std::string{"cannot be read: "} + std::strerror(errno));
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return unreadable("cannot be read: I/O error");
  if (!is_zstd(path)) return scan_text(data, path, false);
  auto z = decompress_zstd(data);
  std::optional<finding> whole;
  if (!z.error.empty())
    whole = finding{
        finding::kind::unreadable, path, 0, 0,
        "corrupt zstd data: " + z.error + " (after " + std::to_string(z.text.size()) + " bytes)"};
  else if (z.cut_short)
    whole = finding{finding::kind::damaged, path, 0, 0, "zstd data cut short inside a frame"};
  auto scan = scan_text(z.text, path, whole.has_value());
  if (whole) scan.findings.insert(scan.findings.begin(), std::move(*whole));
  return scan;
}

caf::expected<std::string> repair_rollout(const std::string& path, const rollout_scan& scan,
                                          int64_t now_unix_s) {
  auto fail = [&path](const std::string& why) {
    return make_error(errc::internal, "cannot repair " + path + ": " + why);
  };
  if (scan.salvaged.empty()) return fail("nothing in it can be read");
  std::string content;
  for (auto& l : scan.salvaged) content += l + "\n";
  if (is_zstd(path)) {
    auto compressed = compress_zstd(content);
    if (!compressed) return std::move(compressed.error());
    content = std::move(*compressed);
  }
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) return fail(std::strerror(errno));
  // Neither name is a rollout's (…jsonl, …jsonl.zst): listings skip both.
  auto tmp = path + ".repair-tmp";
  if (!write_synced(tmp, content, sb.st_mode & 07777))
    return fail("cannot write " + tmp + ": " + std::strerror(errno));
  auto kept = path + ".damaged-" + std::to_string(now_unix_s);
  for (int n = 2; ::link(path.c_str(), kept.c_str()) != 0; ++n) {
    if (errno != EEXIST) {
      auto why = std::string{"cannot keep the original as "} + kept + ": " + std::strerror(errno);
      std::error_code ec;
      fs::remove(tmp, ec);
      return fail(why);
    }
    kept = path + ".damaged-" + std::to_string(now_unix_s) + "-" + std::to_string(n);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto why = std::string{"cannot rename "} + tmp + ": " + std::strerror(errno);
    std::error_code ec;
    fs::remove(tmp, ec);
    fs::remove(kept, ec);
    return fail(why);
  }
  auto dir = fs::path(path).parent_path().string();
  if (!sync_dir(dir.empty() ? "." : dir))
    return fail("cannot sync the directory " + dir + ": " + std::strerror(errno));
  return kept;
}

}  // namespace parley::store
