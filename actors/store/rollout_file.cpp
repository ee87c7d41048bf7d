#include "actors/store/rollout_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>

#include "actors/core/errors.hpp"
#include "protocol/ids.hpp"

namespace parley::store {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

zstd_text decompress_zstd(const std::string& data) {
  zstd_text out;
  ZSTD_DStream* ds = ZSTD_createDStream();
  ZSTD_initDStream(ds);
  std::vector<char> buf(ZSTD_DStreamOutSize());
  ZSTD_inBuffer input{data.data(), data.size(), 0};
  size_t rc = 0;
  bool full = false;  // the output buffer was filled: more may be waiting in zstd
  while (input.pos < input.size || full) {
    ZSTD_outBuffer output{buf.data(), buf.size(), 0};
    rc = ZSTD_decompressStream(ds, &output, &input);
    out.text.append(buf.data(), output.pos);
    if (ZSTD_isError(rc)) {
      out.error = ZSTD_getErrorName(rc);
      break;
    }
    full = output.pos == output.size;
  }
  // Everything was read but the last frame did not end.
  out.cut_short = out.error.empty() && rc != 0;
  ZSTD_freeDStream(ds);
  return out;
}

caf::expected<std::string> read_rollout_bytes(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return make_error(errc::invalid_request,
                      "failed to read rollout `" + path + "`: " + std::strerror(errno));
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!is_zstd(path)) return data;
  auto text = decompress_zstd(data);
  if (!text.error.empty())
    return make_error(errc::invalid_request,
                      "failed to read rollout `" + path + "`: corrupt zstd data: " + text.error);
  return std::move(text.text);
}

std::string rollout_relative_path(int64_t created_unix_s, const std::string& id) {
  std::time_t t = static_cast<std::time_t>(created_unix_s);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char day[16], stamp[32];
  std::strftime(day, sizeof day, "%Y/%m/%d", &tm);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H-%M-%S", &tm);
  return std::string{"sessions/"} + day + "/rollout-" + stamp + "-" + id + ".jsonl";
}

caf::error validate_rollout_path(const std::string& path) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  auto prefix = "failed to resolve rollout path `" + path + "`: ";
  if (ec || !fs::exists(status)) return make_error(errc::invalid_request, prefix + "file does not exist");
  if (fs::is_directory(status)) return make_error(errc::invalid_request, prefix + "path is a directory");
  if (!fs::is_regular_file(status)) return make_error(errc::invalid_request, prefix + "not a regular file");
  return caf::none;
}

std::optional<std::string> id_from_file_name(const std::string& path) {
  auto name = fs::path(path).filename().string();
  if (name.rfind("rollout-", 0) != 0) return std::nullopt;
  std::string stem;
  if (ends_with(name, ".jsonl.zst"))
    stem = name.substr(0, name.size() - 10);
  else if (ends_with(name, ".jsonl"))
    stem = name.substr(0, name.size() - 6);
  else
    return std::nullopt;
  if (stem.size() < 36) return std::nullopt;
  auto id = stem.substr(stem.size() - 36);
  return protocol::is_uuid(id) ? std::optional<std::string>{id} : std::nullopt;
}

std::vector<std::string> list_rollouts(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;  // only real files count as rollouts
    auto p = it->path().string();
    if (id_from_file_name(p)) out.push_back(p);
  }
  return out;
}

std::optional<std::string> find_rollout(const std::string& home, const std::string& id) {
  for (auto sub : {"sessions", "archived_sessions"})
    for (auto& p : list_rollouts(home + "/" + sub))
      if (id_from_file_name(p) == id) return p;
  return std::nullopt;
}

std::vector<std::string> split_rollout_lines(const std::string& data, bool* torn) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < data.size()) {
    auto end = data.find('\n', start);
    if (end == std::string::npos) {
      // No newline at the end: complete only if it parses (a crash mid-write
      // leaves a torn line, which is skipped).
      auto last = data.substr(start);
      if (nlohmann::json::accept(last)) {
        lines.push_back(std::move(last));
      } else if (torn) {
        *torn = true;
      }
      break;
    }
    if (end > start) lines.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

caf::expected<std::vector<std::string>> read_rollout_lines(const std::string& path, bool* torn) {
  if (auto err = validate_rollout_path(path)) return err;
  auto data = read_rollout_bytes(path);
  if (!data) return data.error();
  return split_rollout_lines(*data, torn);
}

caf::error repair_torn_tail(file_ops& ops, int fd, const std::string& path) {
  auto fail = [&path](const char* what) {
    return make_error(errc::internal, std::string{what} + " " + path + ": " + std::strerror(errno));
  };
  off_t size = 0;
  if (ops.fsize(fd, &size) != 0) return fail("cannot stat");
  // Walk back to the last newline, keeping the fragment after it.
  std::string fragment;
  off_t end = size;
  char buf[4096];
  while (end > 0) {
    auto n = std::min<off_t>(end, static_cast<off_t>(sizeof buf));
    if (ops.pread(fd, buf, static_cast<size_t>(n), end - n) != n) return fail("cannot read");
    auto* nl = static_cast<const char*>(::memrchr(buf, '\n', static_cast<size_t>(n)));
    if (nl) {
      fragment.insert(0, nl + 1, static_cast<size_t>(buf + n - nl - 1));
      end -= buf + n - nl - 1;
      break;
    }
    fragment.insert(0, buf, static_cast<size_t>(n));
    end -= n;
  }
  if (fragment.empty()) return caf::none;  // whole already
  if (nlohmann::json::accept(fragment)) {
    // Readers count it as a line: keep it, give it its end.
    if (ops.write(fd, "\n", 1) != 1) return fail("cannot append to");
  } else if (ops.ftruncate(fd, end) != 0) {
    return fail("cannot truncate");
  }
  return caf::none;
}

caf::expected<std::string> compress_zstd(const std::string& content) {
  std::string out(ZSTD_compressBound(content.size()), '\0');
  auto n = ZSTD_compress(out.data(), out.size(), content.data(), content.size(), 3);
  if (ZSTD_isError(n)) return make_error(errc::internal, std::string{"zstd: "} + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

caf::error write_compressed(const std::string& dst, const std::string& content) {
  auto compressed = compress_zstd(content);
  if (!compressed) return std::move(compressed.error());
  auto& out = *compressed;
  auto tmp = dst + ".tmp";
  {
    std::ofstream f{tmp, std::ios::binary | std::ios::trunc};
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    f.flush();
    if (!f) return make_error(errc::internal, "cannot write " + tmp);
  }
  int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  std::error_code ec;
  fs::rename(tmp, dst, ec);
  if (ec) return make_error(errc::internal, "cannot rename " + tmp + ": " + ec.message());
  return caf::none;
}

caf::expected<home_lock> home_lock::acquire(const std::string& home) {
  std::error_code ec;
  fs::create_directories(home, ec);
  auto path = home + "/parley.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(errc::internal, "cannot open " + path + ": " + std::strerror(errno));
  // A parley killed a moment ago can leave the lock held for a few
  // milliseconds more: a command it was starting holds copies of its files
  // until that command's exec closes them. So while the process named in the
  // lock is gone, wait for the lock; while it lives, refuse at once.
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {0};
    [[maybe_unused]] auto n = ::pread(fd, pid, sizeof pid - 1, 0);
    auto holder = std::atol(pid);
    bool holder_gone = holder > 0 && ::kill(static_cast<pid_t>(holder), 0) != 0 && errno == ESRCH;
    if (!holder_gone || std::chrono::steady_clock::now() > give_up) {
      ::close(fd);
      return make_error(errc::internal, "another parley process (pid " + std::string{pid}
                                            + ") is using the home " + home
                                            + "; stop it or pick another --home");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto me = std::to_string(::getpid());
  [[maybe_unused]] auto t = ::ftruncate(fd, 0);
  [[maybe_unused]] auto w = ::pwrite(fd, me.data(), me.size(), 0);
  return home_lock{fd};
}

home_lock::~home_lock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

bool is_zstd(const std::string& path) { return ends_with(path, ".zst"); }

}  // namespace parley::store
