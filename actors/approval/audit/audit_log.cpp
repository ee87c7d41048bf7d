#include "actors/approval/audit/audit_log.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <utility>

namespace parley::audit {

namespace {

using nlohmann::json;

std::string errno_text() {
  return std::strerror(errno);
}

/// Closes a descriptor unless released: open() has many ways to fail.
class unique_fd {
 public:
  explicit unique_fd(int fd) : fd_(fd) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::int64_t system_now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

/// RFC 3339 UTC with milliseconds: 2026-11-21T08:00:00.123Z.
std::string format_ts(std::int64_t unix_ms) {
  auto secs = unix_ms / 1000;
  auto ms = unix_ms % 1000;
  if (ms < 0) {  // before 1970: keep the milliseconds positive
    ms += 1000;
    secs -= 1;
  }
  auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char stamp[40];
  auto n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(ms));
  return std::string(stamp, n) + frac;
}

bool is_hex_digest(const json& j) {
  if (!j.is_string()) return false;
  const auto& s = j.get_ref<const std::string&>();
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

/// `len` bytes at `offset`, or nullopt on a read error.
std::optional<std::string> read_at(int fd, std::uint64_t offset, std::uint64_t len) {
  std::string out(static_cast<std::size_t>(len), '\0');
  std::size_t done = 0;
  while (done < out.size()) {
    auto n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // an error, or the file shrank under us
    done += static_cast<std::size_t>(n);
  }
  return out;
}

/// Where the line that ends before `end` starts: one past the last '\n' in
/// [0, end), or 0. Reads backwards in blocks, so a long log costs one block.
std::optional<std::uint64_t> line_start_before(int fd, std::uint64_t end) {
  constexpr std::uint64_t block = 4096;
  while (end > 0) {
    auto begin = end > block ? end - block : 0;
    auto chunk = read_at(fd, begin, end - begin);
    if (!chunk) return std::nullopt;
    auto nl = chunk->rfind('\n');
    if (nl != std::string::npos) return begin + nl + 1;
    end = begin;
  }
  return 0;
}

/// One line of a file, without its newline.
struct line {
  std::string text;
  bool terminated = true;  // false for a last line with no newline
};

/// Reads the next line of `in`; false at the end.
bool next_line(std::istream& in, line& out) {
  if (!std::getline(in, out.text)) return false;
  out.terminated = !in.eof();  // getline hit the end before a '\n'
  return true;
}

/// Why line `number` is not a well-formed record, or nullopt. On success
/// `prev` is its prev.
std::optional<std::string> check_record(const std::string& text, std::uint64_t number,
                                        std::string& prev) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return std::string{"not JSON"};
  if (!j.is_object()) return std::string{"not a JSON object"};
  auto seq = j.find("seq");
  if (seq == j.end() || !seq->is_number_unsigned()) return std::string{"no unsigned seq"};
  auto n = seq->get<std::uint64_t>();
  if (n > number)
    return "seq " + std::to_string(n) + " where " + std::to_string(number)
           + " was expected: a line before it is missing, or lines were moved";
  if (n < number)
    return "seq " + std::to_string(n) + " where " + std::to_string(number)
           + " was expected: a line was inserted or repeated before it, or lines were moved";
  auto ts = j.find("ts");
  if (ts == j.end() || !ts->is_string()) return std::string{"no ts string"};
  auto event = j.find("event");
  if (event == j.end() || !event->is_string() || event->get_ref<const std::string&>().empty())
    return std::string{"no event"};
  auto p = j.find("prev");
  if (p == j.end() || !is_hex_digest(*p)) return std::string{"prev is not a SHA-256 hex digest"};
  prev = p->get<std::string>();
  return std::nullopt;
}

/// The prev recorded by a line, if it has one.
std::optional<std::string> prev_of(const std::string& text) {
  auto j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto p = j.find("prev");
  if (p == j.end() || !is_hex_digest(*p)) return std::nullopt;
  return p->get<std::string>();
}

}  // namespace

// -- audit_log ---------------------------------------------------------------

audit_log::audit_log(int fd, audit_options options, std::uint64_t size, std::uint64_t next_seq,
                     std::string head)
    : fd_(fd),
      options_(std::move(options)),
      size_(size),
      next_seq_(next_seq),
      head_(std::move(head)) {}

audit_log::audit_log(audit_log&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      options_(std::move(other.options_)),
      size_(other.size_),
      next_seq_(other.next_seq_),
      head_(std::move(other.head_)),
      broken_(other.broken_) {}

audit_log& audit_log::operator=(audit_log&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    options_ = std::move(other.options_);
    size_ = other.size_;
    next_seq_ = other.next_seq_;
    head_ = std::move(other.head_);
    broken_ = other.broken_;
  }
  return *this;
}

audit_log::~audit_log() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

open_result audit_log::open(const std::string& path, audit_options options) {
  open_result result;
  auto fail = [&](std::string why) {
    result.error = "audit log " + path + ": " + std::move(why);
    return std::move(result);
  };
  unique_fd fd{::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
  if (fd.get() < 0) return fail("cannot open: " + errno_text());
  // Taken before anything is read or cut: the tail of a log another writer
  // is appending to is not torn.
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
    return fail(errno == EWOULDBLOCK ? "already open for appending elsewhere"
                                     : "cannot lock: " + errno_text());
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fail("cannot stat: " + errno_text());
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > 0) {
    auto last_byte = read_at(fd.get(), size - 1, 1);
    if (!last_byte) return fail("cannot read: " + errno_text());
    if (*last_byte != "\n") {
      auto start = line_start_before(fd.get(), size);
      auto tail = start ? read_at(fd.get(), *start, size - *start) : std::nullopt;
      if (!tail) return fail("cannot read: " + errno_text());
      if (::ftruncate(fd.get(), static_cast<off_t>(*start)) != 0)
        return fail("cannot cut off the torn last line: " + errno_text());
      if (options.fsync && ::fdatasync(fd.get()) != 0)
        return fail("cannot sync after cutting off the torn last line: " + errno_text());
      result.torn_tail = std::move(*tail);
      size = *start;
    }
  }
  std::uint64_t next_seq = 1;
  std::string head{genesis_prev};
  if (size > 0) {
    auto start = line_start_before(fd.get(), size - 1);
    auto last = start ? read_at(fd.get(), *start, size - 1 - *start) : std::nullopt;
    if (!last) return fail("cannot read: " + errno_text());
    // Refuse to extend a chain whose end is damaged: new lines would hide it.
    auto j = json::parse(*last, nullptr, false);
    auto seq = j.is_object() ? j.find("seq") : j.end();
    if (!j.is_object() || seq == j.end() || !seq->is_number_unsigned())
      return fail("the last line is not an audit record; verify() tells where it is damaged");
    next_seq = seq->get<std::uint64_t>() + 1;
    head = sha256_hex(*last);
  }
  if (!options.now_ms) options.now_ms = system_now_ms;
  result.log = audit_log{fd.release(), std::move(options), size, next_seq, std::move(head)};
  return result;
}

std::optional<std::string> audit_log::append(const record& r) {
  if (fd_ < 0) return std::string{"audit log is not open"};
  if (broken_) return std::string{"audit log is unusable after a failed write; reopen it"};
  if (r.event.empty()) return std::string{"record has no event"};
  if (!r.fields.is_object() && !r.fields.is_null())
    return std::string{"record fields are not a JSON object"};
  for (const char* key : {"seq", "ts", "event", "prev"})
    if (r.fields.contains(key))
      return "record fields use the reserved key \"" + std::string{key} + "\"";
  std::string text;
  try {
    // ordered_json keeps seq, ts and event first and prev last, for readers.
    nlohmann::ordered_json j;
    j["seq"] = next_seq_;
    j["ts"] = format_ts(options_.now_ms());
    j["event"] = r.event;
    if (r.fields.is_object())
      for (auto it = r.fields.begin(); it != r.fields.end(); ++it)
        j[it.key()] = nlohmann::ordered_json(*it);
    j["prev"] = head_;
    // Invalid UTF-8 (say, in a command line) becomes U+FFFD rather than
    // losing the record.
    text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return std::string{"cannot encode the record: "} + e.what();
  }
  auto hash = sha256_hex(text);
  text.push_back('\n');
  // Puts the file back as it was; if that fails, a torn line may sit in the
  // middle of the chain, so nothing more is appended until open() repairs it.
  auto roll_back = [this](std::string why) {
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) broken_ = true;
    return std::optional<std::string>{"audit log: " + std::move(why)};
  };
  std::size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return roll_back("cannot write: " + errno_text());
    if (n == 0) return roll_back("cannot write: no progress");
    done += static_cast<std::size_t>(n);
  }
  if (options_.fsync && ::fdatasync(fd_) != 0) return roll_back("cannot sync: " + errno_text());
  size_ += text.size();
  ++next_seq_;
  head_ = std::move(hash);
  return std::nullopt;
}

// -- verify ------------------------------------------------------------------

namespace {

/// Line `number - 1` no longer hashes to line `number`'s prev: either it was
/// edited or this prev was. If what follows (the next line's prev, or the
/// expected head at the end) contradicts this line's hash, this line
/// changed; otherwise the previous one did.
void fail_broken_link(verify_report& report, std::uint64_t number, const std::string& hash,
                      std::optional<std::string> next_prev, std::string_view expected_head) {
  std::optional<std::string> witness = std::move(next_prev);
  if (!witness && !expected_head.empty()) witness = std::string{expected_head};
  if (witness && *witness != hash) {
    report.first_bad_line = number;
    report.reason = "line " + std::to_string(number) + ": prev does not match the hash of line "
                    + std::to_string(number - 1)
                    + ", and its own hash does not match what follows: it was edited";
    return;
  }
  report.first_bad_line = number - 1;
  report.reason = "line " + std::to_string(number - 1)
                  + ": its hash does not match the prev recorded by line " + std::to_string(number)
                  + ": it was edited"
                  + (witness ? "" : " (or line " + std::to_string(number) + "'s prev was)");
}

}  // namespace

verify_report verify(const std::string& path, std::string_view expected_head) {
  verify_report report;
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    report.reason = "cannot open " + path + ": " + errno_text();
    return report;
  }
  // A window of two lines: the one being checked and the one after it, which
  // is the only witness of whether the checked line is as written.
  line cur, next;
  bool have_cur = next_line(in, cur);
  bool have_next = have_cur && next_line(in, next);
  std::uint64_t number = 0;
  auto fail = [&](std::uint64_t bad, std::string why) {
    report.first_bad_line = bad;
    report.reason = "line " + std::to_string(bad) + ": " + std::move(why);
  };
  while (have_cur) {
    ++number;
    if (!cur.terminated) {
      fail(number, "no newline at the end: a torn write (open() cuts it off)");
      break;
    }
    std::string prev;
    if (auto why = check_record(cur.text, number, prev)) {
      fail(number, std::move(*why));
      break;
    }
    auto hash = sha256_hex(cur.text);
    if (prev != report.head) {
      if (number == 1) {
        fail(1, "prev is not the genesis hash (64 zeros): lines before it are missing");
        break;
      }
      fail_broken_link(report, number, hash, have_next ? prev_of(next.text) : std::nullopt,
                       expected_head);
      break;
    }
    report.head = std::move(hash);
    cur = std::move(next);
    have_cur = have_next;
    have_next = have_cur && next_line(in, next);
  }
  // Count what is left, so `lines` is the whole file either way.
  if (report.first_bad_line) {
    number += have_next ? 1 : 0;
    for (line rest; next_line(in, rest);) ++number;
  }
  report.lines = number;
  if (in.bad()) {
    report.first_bad_line.reset();
    report.reason = "cannot read " + path + ": " + errno_text();
    return report;
  }
  if (report.first_bad_line) return report;
  if (!expected_head.empty() && expected_head != report.head) {
    if (number > 0) report.first_bad_line = number;
    report.reason
        = "the last line does not hash to the expected head: the end of the log was "
          "edited, cut or extended";
    return report;
  }
  report.ok = true;
  return report;
}

}  // namespace parley::audit
