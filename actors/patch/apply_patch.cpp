#include "actors/patch/apply_patch.hpp"

#include "actors/patch/beneath.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <system_error>

namespace parley::patch {
namespace {

namespace fs = std::filesystem;
using std::string_view;

// -- text helpers -------------------------------------------------------------

constexpr const char* whitespace = " \t\r\n\v\f";

string_view rtrim(string_view s) {
  auto end = s.find_last_not_of(whitespace);
  return end == string_view::npos ? string_view{} : s.substr(0, end + 1);
}

string_view trim(string_view s) {
  auto begin = s.find_first_not_of(whitespace);
  return begin == string_view::npos ? string_view{} : rtrim(s.substr(begin));
}

bool starts_with(string_view s, string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(string_view s, string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Quotes a patch line for an error message; long lines are cut so one bad
// line cannot flood the reply.
std::string quote(string_view line) {
  constexpr size_t limit = 80;
  if (line.size() <= limit) return "'" + std::string(line) + "'";
  return "'" + std::string(line.substr(0, limit)) + "...'";
}

// -- parsing ------------------------------------------------------------------

constexpr string_view begin_marker = "*** Begin Patch";
constexpr string_view end_marker = "*** End Patch";
constexpr string_view add_marker = "*** Add File:";
constexpr string_view update_marker = "*** Update File:";
constexpr string_view delete_marker = "*** Delete File:";
constexpr string_view move_marker = "*** Move to:";
constexpr string_view eof_marker = "*** End of File";

error parse_error(size_t line, const std::string& what) {
  return {"invalid patch: line " + std::to_string(line) + ": " + what};
}

std::string unexpected_line(string_view line) {
  return "unexpected line " + quote(line)
         + ": hunk lines start with ' ' (context), '+' (added) or '-' (removed),"
           " and a new hunk starts with '@@'";
}

// Splits on '\n' and drops one '\r' before it, so CRLF patches parse too.
std::vector<string_view> split_patch_lines(const std::string& text) {
  std::vector<string_view> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    string_view line(text.data() + pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = nl + 1;
  }
  return lines;
}

bool is_heredoc_start(string_view line) {
  return line == "<<EOF" || line == "<<'EOF'" || line == "<<\"EOF\"";
}

// A recursive-descent reader over the lines between the Begin and End markers.
// Indices are 0-based; messages use index + 1.
class parser {
 public:
  explicit parser(const std::string& text) : lines_(split_patch_lines(text)) {}

  result<parsed_patch> run() {
    if (auto err = find_envelope()) return *err;
    parsed_patch out;
    while (pos_ < end_) {
      auto header = trim(lines_[pos_]);
      if (header.empty()) {
        ++pos_;
        continue;
      }
      std::optional<error> err;
      if (starts_with(header, add_marker))
        err = add_file(header, out);
      else if (starts_with(header, update_marker))
        err = update_file(header, out);
      else if (starts_with(header, delete_marker))
        err = delete_file(header, out);
      else
        err = parse_error(pos_ + 1, quote(lines_[pos_])
                                        + " is not a file header; expected '*** Add File: <path>',"
                                          " '*** Update File: <path>' or '*** Delete File: <path>'");
      if (err) return *err;
    }
    if (out.files.empty())
      return error{"invalid patch: nothing between '*** Begin Patch' and '*** End Patch'"};
    return out;
  }

 private:
  // Locates "*** Begin Patch" ... "*** End Patch", ignoring blank lines around
  // them and, as Codex does for models that send shell syntax, a heredoc
  // wrapper (<<'EOF' ... EOF).
  std::optional<error> find_envelope() {
    auto blank = [&](size_t i) { return trim(lines_[i]).empty(); };
    size_t first = 0;
    while (first < lines_.size() && blank(first)) ++first;
    if (first == lines_.size()) return error{"invalid patch: the patch is empty"};
    size_t last = lines_.size() - 1;
    while (blank(last)) --last;
    if (last - first >= 3 && is_heredoc_start(trim(lines_[first]))
        && ends_with(trim(lines_[last]), "EOF")) {
      ++first;
      --last;
      while (first < last && blank(first)) ++first;
      while (last > first && blank(last)) --last;
    }
    if (trim(lines_[first]) != begin_marker)
      return parse_error(first + 1, "the patch must start with '*** Begin Patch', found "
                                        + quote(trim(lines_[first])));
    if (last == first || trim(lines_[last]) != end_marker)
      return parse_error(
          last + 1, "the patch must end with '*** End Patch', found " + quote(trim(lines_[last])));
    pos_ = first + 1;
    end_ = last;
    return std::nullopt;
  }

  // The path after a marker, or an error naming the marker.
  std::optional<std::string> path_after(string_view header, string_view marker,
                                        std::optional<error>& err) const {
    auto path = trim(header.substr(marker.size()));
    if (path.empty()) {
      err = parse_error(pos_ + 1, "missing path after '" + std::string(marker) + "'");
      return std::nullopt;
    }
    return std::string(path);
  }

  std::optional<error> add_file(string_view header, parsed_patch& out) {
    std::optional<error> err;
    auto path = path_after(header, add_marker, err);
    if (!path) return err;
    file_patch f;
    f.kind = change_kind::add;
    f.path = std::move(*path);
    f.line = ++pos_;
    // Every following '+' line is content; the first other line ends the file.
    for (; pos_ < end_ && starts_with(lines_[pos_], "+"); ++pos_) {
      f.content.append(lines_[pos_].substr(1));
      f.content += '\n';
    }
    out.files.push_back(std::move(f));
    return std::nullopt;
  }

  std::optional<error> delete_file(string_view header, parsed_patch& out) {
    std::optional<error> err;
    auto path = path_after(header, delete_marker, err);
    if (!path) return err;
    file_patch f;
    f.kind = change_kind::remove;
    f.path = std::move(*path);
    f.line = ++pos_;
    out.files.push_back(std::move(f));
    return std::nullopt;
  }

  std::optional<error> update_file(string_view header, parsed_patch& out) {
    std::optional<error> err;
    auto path = path_after(header, update_marker, err);
    if (!path) return err;
    file_patch f;
    f.kind = change_kind::update;
    f.path = std::move(*path);
    f.line = ++pos_;
    if (pos_ < end_ && starts_with(trim(lines_[pos_]), move_marker)) {
      auto to = path_after(trim(lines_[pos_]), move_marker, err);
      if (!to) return err;
      f.move_to = std::move(*to);
      ++pos_;
    }
    while (pos_ < end_) {
      auto line = lines_[pos_];
      if (trim(line).empty()) {  // blank lines between hunks
        ++pos_;
        continue;
      }
      if (starts_with(line, "*")) break;  // the next file header (or garbage)
      hunk h;
      if (auto hunk_err = read_hunk(f.hunks.empty(), h)) return hunk_err;
      f.hunks.push_back(std::move(h));
    }
    if (f.hunks.empty())
      return parse_error(f.line, "'*** Update File: " + f.path + "' has no hunks");
    out.files.push_back(std::move(f));
    return std::nullopt;
  }

  // One hunk: "@@" header lines, then ' ', '+', '-' lines, then an optional
  // "*** End of File". Codex lets the first hunk of a file omit its "@@".
  std::optional<error> read_hunk(bool first, hunk& h) {
    h.line = pos_ + 1;
    bool has_header = false;
    for (; pos_ < end_; ++pos_) {
      auto line = lines_[pos_];
      if (rtrim(line) == "@@") {
        has_header = true;
      } else if (starts_with(line, "@@ ")) {
        has_header = true;
        // Several "@@ <anchor>" lines narrow the search step by step (class,
        // then method), as Codex's tool instructions describe.
        if (!trim(line.substr(3)).empty()) h.anchors.emplace_back(line.substr(3));
      } else {
        break;
      }
    }
    if (!has_header && !first) return parse_error(pos_ + 1, unexpected_line(lines_[pos_]));
    size_t body = 0;
    for (; pos_ < end_; ++pos_, ++body) {
      auto line = lines_[pos_];
      if (rtrim(line) == eof_marker) {
        if (body == 0) return parse_error(pos_ + 1, "'*** End of File' ends an empty hunk");
        h.end_of_file = true;
        ++pos_;
        break;
      }
      if (line.empty()) {  // an editor stripped the ' ' of an empty context line
        h.lines.push_back({' ', ""});
        continue;
      }
      if (line[0] != ' ' && line[0] != '-' && line[0] != '+') break;
      h.lines.push_back({line[0], std::string(line.substr(1))});
    }
    if (body == 0) {
      if (pos_ < end_ && !starts_with(lines_[pos_], "*"))
        return parse_error(pos_ + 1, unexpected_line(lines_[pos_]));
      return parse_error(h.line, "empty hunk");
    }
    return std::nullopt;
  }

  std::vector<string_view> lines_;
  size_t pos_ = 0;  // next line to read
  size_t end_ = 0;  // index of "*** End Patch"
};

// -- matching -----------------------------------------------------------------

// Maps the typographic punctuation models and editors swap in for ASCII
// (dashes, curly quotes, unusual spaces) back to ASCII; 0 means keep.
char ascii_for(uint32_t code_point) {
  if ((code_point >= 0x2010 && code_point <= 0x2015) || code_point == 0x2212) return '-';
  if (code_point >= 0x2018 && code_point <= 0x201B) return '\'';
  if (code_point >= 0x201C && code_point <= 0x201F) return '"';
  if (code_point == 0x00A0 || (code_point >= 0x2002 && code_point <= 0x200A) || code_point == 0x202F
      || code_point == 0x205F || code_point == 0x3000)
    return ' ';
  return 0;
}

std::string fold_unicode(string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto lead = static_cast<unsigned char>(s[i]);
    size_t len = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : 1;
    if (i + len > s.size()) len = 1;
    uint32_t code_point = len == 2 ? lead & 0x1Fu : lead & 0x0Fu;
    for (size_t j = 1; j < len; ++j) {
      auto next = static_cast<unsigned char>(s[i + j]);
      if ((next & 0xC0) != 0x80) len = 1;  // not UTF-8: keep the byte as is
      code_point = (code_point << 6) | (next & 0x3Fu);
    }
    char ascii = len > 1 ? ascii_for(code_point) : 0;
    if (ascii != 0)
      out += ascii;
    else
      out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

enum class leniency { exact, trailing_space, outer_space, punctuation };

bool same_line(string_view file_line, string_view patch_line, leniency level) {
  switch (level) {
    case leniency::exact:
      return file_line == patch_line;
    case leniency::trailing_space:
      return rtrim(file_line) == rtrim(patch_line);
    case leniency::outer_space:
      return trim(file_line) == trim(patch_line);
    case leniency::punctuation:
      return trim(fold_unicode(file_line)) == trim(fold_unicode(patch_line));
  }
  return false;
}

// -- applying hunks in memory -------------------------------------------------

// A file counts as CRLF only if every line break is CRLF; then its lines are
// matched without the '\r' and the result is written back with CRLF.
bool uses_crlf(const std::string& content) {
  size_t breaks = 0;
  for (size_t i = 0; i < content.size(); ++i) {
    if (content[i] != '\n') continue;
    if (i == 0 || content[i - 1] != '\r') return false;
    ++breaks;
  }
  return breaks > 0;
}

std::vector<std::string> split_file_lines(const std::string& content, bool crlf) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < content.size()) {
    auto nl = content.find('\n', pos);
    if (nl == std::string::npos) nl = content.size();
    size_t len = nl - pos;
    if (crlf && len > 0 && content[nl - 1] == '\r') --len;
    lines.emplace_back(content, pos, len);
    pos = nl + 1;
  }
  return lines;
}

struct replacement {
  size_t start;
  size_t length;
  std::vector<std::string> lines;
  size_t hunk;  // 1-based, for messages
};

std::string render_expected(const std::vector<std::string>& lines) {
  constexpr size_t limit = 20;
  std::string out;
  for (size_t i = 0; i < lines.size() && i < limit; ++i) out += "\n  " + lines[i];
  if (lines.size() > limit) out += "\n  ... (" + std::to_string(lines.size() - limit) + " more)";
  return out;
}

// Applies an Update File's hunks to `original`. Each hunk is searched from
// where the previous one ended, so hunks must be in file order (as in Codex).
result<std::string> apply_hunks(const std::string& original, const file_patch& f) {
  bool crlf = uses_crlf(original);
  auto lines = split_file_lines(original, crlf);
  std::vector<replacement> replacements;
  size_t next = 0;
  for (size_t k = 0; k < f.hunks.size(); ++k) {
    const auto& h = f.hunks[k];
    auto fail = [&](const std::string& why) {
      return error{"hunk " + std::to_string(k + 1) + " of " + f.path + " does not apply: " + why};
    };
    for (const auto& anchor : h.anchors) {
      auto at = detail::seek(lines, {anchor}, next, false);
      if (!at) return fail("context '@@ " + anchor + "' not found");
      next = *at + 1;
    }
    auto body = h.lines;
    auto old_lines = h.old_lines();
    if (old_lines.empty()) {
      // Nothing to locate. After an anchor, insert right below it; without
      // one, append (before a final blank line), which is what Codex does.
      size_t at = lines.size();
      if (!h.anchors.empty())
        at = next;
      else if (!lines.empty() && lines.back().empty())
        at = lines.size() - 1;
      replacements.push_back({at, 0, h.new_lines(), k + 1});
      if (!h.anchors.empty()) next = at;
      continue;
    }
    auto at = detail::seek(lines, old_lines, next, h.end_of_file);
    if (!at && old_lines.back().empty()) {
      // A trailing empty line usually stands for the file's final newline,
      // which is not a line of its own here: retry without it.
      auto last_old = std::find_if(body.rbegin(), body.rend(),
                                   [](const hunk_line& l) { return l.kind != '+'; });
      body.erase(std::next(last_old).base());
      old_lines.pop_back();
      at = detail::seek(lines, old_lines, next, h.end_of_file);
    }
    if (!at) {
      return fail(std::string(h.end_of_file ? "expected lines not found at the end of the file:"
                                            : "expected lines not found:")
                  + render_expected(h.old_lines()));
    }
    // Context lines keep the file's text: a match that ignored whitespace
    // must not reformat lines the patch did not mean to change.
    std::vector<std::string> replaced;
    size_t from = *at;
    for (const auto& l : body) {
      if (l.kind == ' ') replaced.push_back(lines[from]);
      if (l.kind == '+') replaced.push_back(l.text);
      if (l.kind != '+') ++from;
    }
    next = *at + old_lines.size();
    replacements.push_back({*at, old_lines.size(), std::move(replaced), k + 1});
  }
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const auto& x, const auto& y) { return x.start < y.start; });
  // Only an append without anchor can land inside a later hunk's lines;
  // applying both would garble the file, so say so instead.
  for (size_t i = 1; i < replacements.size(); ++i) {
    const auto& prev = replacements[i - 1];
    if (replacements[i].start < prev.start + prev.length) {
      return error{"hunk " + std::to_string(std::max(prev.hunk, replacements[i].hunk)) + " of "
                   + f.path + " does not apply: it overlaps hunk "
                   + std::to_string(std::min(prev.hunk, replacements[i].hunk))};
    }
  }
  // Back to front, so earlier positions stay valid.
  for (auto it = replacements.rbegin(); it != replacements.rend(); ++it) {
    auto first = lines.begin() + static_cast<std::ptrdiff_t>(it->start);
    first = lines.erase(first, first + static_cast<std::ptrdiff_t>(it->length));
    lines.insert(first, it->lines.begin(), it->lines.end());
  }
  // Like Codex, the result always ends with a line break.
  const char* eol = crlf ? "\r\n" : "\n";
  std::string out;
  for (const auto& line : lines) {
    out += line;
    out += eol;
  }
  return out;
}

// -- diffing ------------------------------------------------------------------

// Lines including their '\n', so "x" at the end of a file without a final
// newline differs from "x\n", as in diff(1).
std::vector<string_view> diff_lines(const std::string& content) {
  std::vector<string_view> lines;
  size_t pos = 0;
  while (pos < content.size()) {
    auto nl = content.find('\n', pos);
    size_t end = nl == std::string::npos ? content.size() : nl + 1;
    lines.emplace_back(content.data() + pos, end - pos);
    pos = end;
  }
  return lines;
}

enum class edit_kind : char { keep = ' ', remove = '-', insert = '+' };

// Myers' O((N+M)D) shortest edit script on the lines between a common prefix
// and suffix. The trace of frontier snapshots costs O(D^2) memory, so past
// `max_trace` entries it gives up and the caller emits the region as one
// removal plus one insertion: still a correct diff, only a coarser one.
constexpr size_t max_trace = size_t{1} << 22;

bool shortest_edit(const string_view* a, std::ptrdiff_t n, const string_view* b, std::ptrdiff_t m,
                   std::vector<edit_kind>& out) {
  using index = std::ptrdiff_t;
  const index max = n + m;
  std::vector<index> frontier(static_cast<size_t>(2 * max + 3), 0);
  auto v = [&](index k) -> index& { return frontier[static_cast<size_t>(k + max + 1)]; };
  std::vector<std::vector<index>> trace;  // trace[d][(k + d) / 2], after round d
  size_t stored = 0;
  index found_d = -1;
  for (index d = 0; d <= max && found_d < 0; ++d) {
    for (index k = -d; k <= d; k += 2) {
      index x = (k == -d || (k != d && v(k - 1) < v(k + 1))) ? v(k + 1) : v(k - 1) + 1;
      index y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v(k) = x;
      if (x >= n && y >= m) {
        // Only (n, m) itself is a valid end; anything past it would index
        // beyond the lines, so treat it as "too hard" and go coarse.
        if (x != n || y != m) return false;
        found_d = d;
        break;
      }
    }
    if (found_d >= 0) break;
    std::vector<index> round;
    round.reserve(static_cast<size_t>(d + 1));
    for (index k = -d; k <= d; k += 2) round.push_back(v(k));
    stored += round.size();
    if (stored > max_trace) return false;
    trace.push_back(std::move(round));
  }
  // Walk back from (n, m), one edit per round, emitting in reverse.
  std::vector<edit_kind> reversed;
  index x = n;
  index y = m;
  for (index d = found_d; d > 0; --d) {
    const auto& prev = trace[static_cast<size_t>(d - 1)];
    auto at = [&](index k) { return prev[static_cast<size_t>((k + d - 1) / 2)]; };
    index k = x - y;
    bool down = k == -d || (k != d && at(k - 1) < at(k + 1));
    index prev_k = down ? k + 1 : k - 1;
    index prev_x = at(prev_k);
    index prev_y = prev_x - prev_k;
    index snake_x = down ? prev_x : prev_x + 1;
    for (; x > snake_x; --x, --y) reversed.push_back(edit_kind::keep);
    reversed.push_back(down ? edit_kind::insert : edit_kind::remove);
    x = prev_x;
    y = prev_y;
  }
  for (; x > 0; --x) reversed.push_back(edit_kind::keep);
  out.insert(out.end(), reversed.rbegin(), reversed.rend());
  return true;
}

std::vector<edit_kind> edit_script(const std::vector<string_view>& a,
                                   const std::vector<string_view>& b) {
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix
         && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  std::vector<edit_kind> script(prefix, edit_kind::keep);
  auto n = a.size() - prefix - suffix;
  auto m = b.size() - prefix - suffix;
  if (!shortest_edit(a.data() + prefix, static_cast<std::ptrdiff_t>(n), b.data() + prefix,
                     static_cast<std::ptrdiff_t>(m), script)) {
    script.insert(script.end(), n, edit_kind::remove);
    script.insert(script.end(), m, edit_kind::insert);
  }
  script.insert(script.end(), suffix, edit_kind::keep);
  return script;
}

// "start,count" as diff(1) prints it: a one-line range is just "start", and
// an empty range starts at the line before it.
std::string range(size_t before, size_t count) {
  auto start = count == 0 ? before : before + 1;
  if (count == 1) return std::to_string(start);
  return std::to_string(start) + "," + std::to_string(count);
}

std::string diff_body(const std::string& old_content, const std::string& new_content) {
  constexpr size_t context = 3;
  auto a = diff_lines(old_content);
  auto b = diff_lines(new_content);
  auto script = edit_script(a, b);
  // Position in a and b before each edit.
  std::vector<std::pair<size_t, size_t>> pos(script.size() + 1);
  for (size_t i = 0; i < script.size(); ++i) {
    pos[i + 1] = pos[i];
    if (script[i] != edit_kind::insert) ++pos[i + 1].first;
    if (script[i] != edit_kind::remove) ++pos[i + 1].second;
  }
  std::string out;
  size_t i = 0;
  while (i < script.size()) {
    while (i < script.size() && script[i] == edit_kind::keep) ++i;
    if (i == script.size()) break;
    // Changes closer than 2 * context unchanged lines share a hunk.
    size_t last = i;
    for (size_t j = i + 1; j < script.size();) {
      if (script[j] != edit_kind::keep) {
        last = j++;
        continue;
      }
      size_t run = j;
      while (run < script.size() && script[run] == edit_kind::keep) ++run;
      if (run == script.size() || run - j > 2 * context) break;
      j = run;
    }
    size_t begin = i >= context ? i - context : 0;
    size_t end = std::min(script.size(), last + context + 1);
    out += "@@ -" + range(pos[begin].first, pos[end].first - pos[begin].first) + " +"
           + range(pos[begin].second, pos[end].second - pos[begin].second) + " @@\n";
    for (size_t e = begin; e < end; ++e) {
      auto line = script[e] == edit_kind::insert ? b[pos[e].second] : a[pos[e].first];
      out += static_cast<char>(script[e]);
      if (!line.empty() && line.back() == '\n') {
        out.append(line);
      } else {
        out.append(line);
        out += "\n\\ No newline at end of file\n";
      }
    }
    i = end;
  }
  return out;
}

std::string diff_name(const std::optional<std::string>& path, const char* side) {
  if (!path) return "/dev/null";
  auto name = string_view(*path);
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  return side + std::string(name);
}

// -- paths --------------------------------------------------------------------

// Lexical normalisation without a trailing separator ("a/b/" -> "a/b").
fs::path normalised(const fs::path& p) {
  auto s = p.lexically_normal().native();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

fs::path resolve(const fs::path& base, const std::string& p) {
  fs::path path(p);
  return normalised(path.is_relative() ? base / path : path);
}

bool within(const fs::path& path, const fs::path& root) {
  auto [root_end, ignored] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  (void)ignored;
  return root_end == root.end();
}

// The name used in diffs: relative to cwd when inside it, else absolute.
std::string display_name(const fs::path& resolved, const fs::path& cwd) {
  if (within(resolved, cwd) && resolved != cwd) return resolved.lexically_relative(cwd).native();
  return resolved.native();
}

// -- file I/O -----------------------------------------------------------------

std::string describe(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// Reads the rest of `fd` and closes it; nullopt with `err` set on failure.
std::optional<std::string> read_fd(int fd, int& err) {
  if (fd < 0) {
    err = errno;
    return std::nullopt;
  }
  std::string content;
  char buf[65536];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

// Reads a whole file; nullopt with `err` set on failure.
std::optional<std::string> read_all(const std::string& path, int& err) {
  return read_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC), err);
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The current content of a file the patch updates or deletes.
result<std::string> read_existing(const fs::path& path, const std::string& shown,
                                  const char* verb) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  auto prefix = std::string("cannot ") + verb + " " + shown + ": ";
  if (st.type() == fs::file_type::not_found) return error{prefix + "no such file"};
  if (ec) return error{prefix + ec.message()};
  if (fs::is_directory(st)) return error{prefix + "it is a directory"};
  if (!fs::is_regular_file(st)) return error{prefix + "not a regular file"};
  int err = 0;
  auto content = read_all(path.native(), err);
  if (!content) return error{prefix + describe(err)};
  return std::move(*content);
}

// True when something (even a dangling symlink) is at `path`.
result<bool> occupied(const fs::path& path, const std::string& shown) {
  std::error_code ec;
  auto st = fs::symlink_status(path, ec);
  if (st.type() == fs::file_type::not_found) return false;
  if (ec) return error{"cannot check " + shown + ": " + ec.message()};
  return true;
}

}  // namespace

// -- public: parse, seek, plan, diff -----------------------------------------

std::vector<std::string> hunk::old_lines() const {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.kind != '+') out.push_back(l.text);
  return out;
}

std::vector<std::string> hunk::new_lines() const {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.kind != '-') out.push_back(l.text);
  return out;
}

result<parsed_patch> parse(const std::string& text) {
  return parser(text).run();
}

std::optional<size_t> detail::seek(const std::vector<std::string>& lines,
                                   const std::vector<std::string>& pattern, size_t start,
                                   bool at_end) {
  if (pattern.empty()) return std::min(start, lines.size());
  if (pattern.size() > lines.size()) return std::nullopt;
  size_t last = lines.size() - pattern.size();
  size_t first = at_end ? last : start;
  if (first > last || first < start) return std::nullopt;
  for (auto level :
       {leniency::exact, leniency::trailing_space, leniency::outer_space, leniency::punctuation}) {
    for (size_t i = first; i <= last; ++i) {
      bool match = true;
      for (size_t j = 0; j < pattern.size() && match; ++j)
        match = same_line(lines[i + j], pattern[j], level);
      if (match) return i;
    }
  }
  return std::nullopt;
}

std::string unified_diff(const std::optional<std::string>& old_path,
                         const std::optional<std::string>& new_path, const std::string& old_content,
                         const std::string& new_content) {
  if (old_content == new_content && old_path == new_path) return {};
  return "--- " + diff_name(old_path, "a/") + "\n+++ " + diff_name(new_path, "b/") + "\n"
         + diff_body(old_content, new_content);
}

std::string unified_diff(const std::string& path, const std::string& old_content,
                         const std::string& new_content) {
  return unified_diff(std::optional<std::string>(path), std::optional<std::string>(path),
                      old_content, new_content);
}

result<std::vector<file_change>> plan(const parsed_patch& patch, const std::string& cwd,
                                      const std::vector<std::string>& writable_roots) {
  if (cwd.empty()) return error{"cannot plan a patch without a working directory"};
  std::error_code ec;
  auto base = fs::absolute(cwd, ec);
  if (ec) return error{"cannot resolve the working directory " + cwd + ": " + ec.message()};
  base = normalised(base);
  std::vector<fs::path> roots;
  for (const auto& root : writable_roots) roots.push_back(resolve(base, root));
  if (roots.empty()) roots.push_back(base);
  // A path must lie in a root as written and as it really is: a directory
  // symlink inside a root may lead anywhere. The last name is not followed
  // (apply() replaces or removes it, never writes through it), but plan()
  // does read through it. apply() then writes beneath the real root found
  // here, so a symlink swapped in later cannot lead out either.
  std::vector<fs::path> real_roots;
  for (const auto& r : roots) {
    auto real = fs::weakly_canonical(r, ec);
    real_roots.push_back(ec ? r : normalised(real));
  }
  struct place {
    std::string root;     // empty: unrestricted
    std::string beneath;  // the path below `root`
  };
  auto locate = [&](const fs::path& p) -> std::optional<place> {
    if (std::none_of(roots.begin(), roots.end(), [&](const auto& r) { return within(p, r); }))
      return std::nullopt;
    auto real = beneath::real_path_of(p);
    for (const auto& r : real_roots) {
      if (!within(real, r)) continue;
      if (r == r.root_path()) return place{"", p.relative_path().native()};
      return place{r.native(), real.lexically_relative(r).native()};
    }
    return std::nullopt;
  };
  auto refused = [](const std::string& shown) {
    return error{"refused by policy: " + shown + " is outside the writable roots",
                 error::kind::outside_roots};
  };
  // Two sections on one file would make the result depend on their order,
  // and apply() could not restore the file exactly; Codex's own map of
  // changes keeps only one of them. Refuse instead, except for "Delete File"
  // then "Add File" of one path, which models use to rewrite a file.
  std::map<fs::path, size_t> touched;  // -> index in `changes`
  std::vector<file_change> changes;
  auto claim = [&](const fs::path& p, const std::string& shown) -> std::optional<error> {
    if (touched.emplace(p, changes.size()).second) return std::nullopt;
    return error{"invalid patch: " + shown + " is changed by more than one file section"};
  };

  for (const auto& f : patch.files) {
    file_change c;
    c.kind = f.kind;
    c.path = f.path;
    c.move_to = f.move_to;
    auto path = resolve(base, f.path);
    c.resolved_path = path.native();
    auto where = locate(path);
    if (!where) return refused(f.path);
    c.root = where->root;
    c.beneath_root = where->beneath;
    auto shown = display_name(path, base);
    if (auto it = touched.find(path); it != touched.end() && f.kind == change_kind::add
                                      && changes[it->second].kind == change_kind::remove) {
      auto& rewrite = changes[it->second];
      rewrite.kind = change_kind::update;
      rewrite.new_content = f.content;
      rewrite.unified_diff = unified_diff(shown, rewrite.old_content, rewrite.new_content);
      continue;
    }
    if (auto err = claim(path, f.path)) return *err;
    switch (f.kind) {
      case change_kind::add: {
        auto exists = occupied(path, f.path);
        if (!exists) return exists.error();
        if (*exists) return error{"cannot add " + f.path + ": it already exists"};
        c.new_content = f.content;
        c.unified_diff = unified_diff(std::nullopt, shown, "", c.new_content);
        break;
      }
      case change_kind::remove: {
        auto old = read_existing(path, f.path, "delete");
        if (!old) return old.error();
        c.old_content = std::move(old).value();
        c.unified_diff = unified_diff(shown, std::nullopt, c.old_content, "");
        break;
      }
      case change_kind::update: {
        auto old = read_existing(path, f.path, "update");
        if (!old) return old.error();
        c.old_content = std::move(old).value();
        auto updated = apply_hunks(c.old_content, f);
        if (!updated) return updated.error();
        c.new_content = std::move(updated).value();
        auto shown_to = shown;
        if (f.move_to) {
          auto to = resolve(base, *f.move_to);
          auto to_where = locate(to);
          if (!to_where) return refused(*f.move_to);
          if (to != path) {
            c.move_root = to_where->root;
            c.move_beneath_root = to_where->beneath;
            if (auto err = claim(to, *f.move_to)) return *err;
            // Codex overwrites an existing destination; like an Add onto an
            // existing file, that would discard content the diff never showed.
            auto exists = occupied(to, *f.move_to);
            if (!exists) return exists.error();
            if (*exists)
              return error{"cannot move " + f.path + " to " + *f.move_to
                           + ": the destination already exists"};
            c.resolved_move_to = to.native();
            shown_to = display_name(to, base);
          }
        }
        c.unified_diff = unified_diff(shown, shown_to, c.old_content, c.new_content);
        break;
      }
    }
    changes.push_back(std::move(c));
  }
  return changes;
}

// -- public: apply ------------------------------------------------------------
//
// The all-or-nothing sequence:
//   1. check  every file still holds what plan() read (and new paths are free);
//   2. stage  each new content in a temp file next to its target, fsync'ed,
//             with the original's permissions; hard-link (or copy) each file
//             that will be replaced or deleted to a backup next to it;
//   3. commit in patch order: rename each temp over its target (new files
//             with RENAME_NOREPLACE, so a file that appeared meanwhile is not
//             clobbered), unlink each deleted or moved-away file;
//   4. finish: drop the backups, fsync the directories.
// A failure in 1 or 2 removes what was staged: nothing visible changed. A
// failure in 3 undoes the committed steps in reverse (backups renamed back,
// new files unlinked), then cleans up as in 2.
//
// What remains: the commit is a sequence of renames, not one. If the process
// or machine dies in the middle of step 3, some files are new and others old,
// and the temp and backup files (".<name>.parley-<pid>-<n>.tmp/.bak", next
// to their targets) stay behind; the backups hold the old contents for manual
// recovery. Also, a file modified by someone else between check and commit
// (a few system calls apart) is overwritten.

namespace {

struct step {
  std::string target;                     // absolute, as planned (for the test seam)
  std::string root;                       // the root the write stays beneath; empty: none
  std::string dir_path;                   // target's directory, beneath `root`
  std::string name;                       // target's name in that directory
  beneath::unique_fd dir;                 // that directory, once opened beneath the root
  bool write = false;                     // rename a temp over target, else unlink target
  const std::string* content = nullptr;   // write: what to write
  const std::string* expected = nullptr;  // target exists: what it must still hold
  std::string shown;                      // the path as written, for messages
  mode_t mode = 0666;                     // write: permissions (umask applies when new)
  bool keep_mode = false;                 // write: take `mode` as is (the original's)
  std::string temp;                       // staged content (a name in `dir`), until committed
  std::string backup;                     // the original (a name in `dir`), until finished
  bool committed = false;
};

// `target` as planned, `root` and `below` (the path beneath it) from plan();
// without them (a change not made by plan()) the write is unrestricted.
step step_for(const std::string& target, const std::string& root, const std::string& below) {
  step s;
  s.target = target;
  s.root = root;
  auto rel = fs::path(below.empty() ? fs::path(target).relative_path().native() : below);
  s.dir_path = rel.parent_path().native();
  s.name = rel.filename().native();
  return s;
}

std::atomic<unsigned> name_counter{0};

std::string sibling_name(const std::string& name, const char* suffix) {
  return "." + name.substr(0, 100) + ".parley-" + std::to_string(::getpid()) + "-"
         + std::to_string(name_counter.fetch_add(1)) + suffix;
}

// Why a directory could not be opened beneath its root, for messages.
std::string describe_open(const step& s, int err) {
  if (!s.root.empty() && (err == EXDEV || err == ELOOP || err == ENOTDIR))
    return "it leads outside the writable root " + s.root;
  return describe(err);
}

class transaction {
 public:
  transaction(std::vector<step> steps, const detail::fault_injector& inject)
      : steps_(std::move(steps)), inject_(inject) {}

  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  // Whatever happened, no temp, backup or directory of ours stays behind.
  ~transaction() { discard(); }

  status run() {
    for (auto& s : steps_)
      if (auto err = check(s)) return *err;
    for (auto& s : steps_) {
      std::optional<error> err;
      if (s.write) err = stage(s);
      if (!err && s.expected) err = back_up(s);
      if (err) return *err;
    }
    for (auto& s : steps_)
      if (auto err = commit(s)) return roll_back(*err);
    finish();
    return std::monostate{};
  }

 private:
  bool fault(const char* what, const std::string& path) {
    if (!inject_ || !inject_(what, path)) return false;
    errno = EIO;
    return true;
  }

  std::optional<error> check(step& s) {
    s.dir = beneath::open_dir(s.root, s.dir_path);
    if (!s.dir) {
      int err = errno;
      if (!s.expected && err == ENOENT) return std::nullopt;  // stage() creates it
      return error{"cannot apply the patch: " + s.shown + ": " + describe_open(s, err)};
    }
    struct stat st {};
    if (!s.expected) {
      if (::fstatat(s.dir.get(), s.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        return error{"cannot create " + s.shown + ": it now exists"};
      if (errno != ENOENT) return error{"cannot check " + s.shown + ": " + describe(errno)};
      return std::nullopt;
    }
    int err = 0;
    auto now = read_fd(::openat(s.dir.get(), s.name.c_str(), O_RDONLY | O_CLOEXEC), err);
    if (!now) return error{"cannot apply the patch: " + s.shown + ": " + describe(err)};
    if (*now != *s.expected)
      return error{"cannot apply the patch: " + s.shown + " changed since the patch was planned"};
    if (s.write && ::fstatat(s.dir.get(), s.name.c_str(), &st, 0) == 0) {
      s.mode = st.st_mode & 07777;
      s.keep_mode = true;
    }
    return std::nullopt;
  }

  std::optional<error> make_parents(step& s) {
    if (s.dir) return std::nullopt;
    auto prefix = s.root.empty() ? std::string("/") : s.root + "/";
    s.dir = beneath::make_dirs(s.root, s.dir_path, created_dirs_,
                               [&](const std::string& rel) { return fault("mkdir", prefix + rel); });
    if (s.dir) return std::nullopt;
    return error{"cannot create the directory of " + s.shown + ": " + describe_open(s, errno)
                 + "; nothing was changed"};
  }

  std::optional<error> stage(step& s) {
    if (auto err = make_parents(s)) return err;
    auto fail = [&](int err) {
      return error{"cannot write " + s.shown + ": " + describe(err) + "; nothing was changed"};
    };
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      auto name = sibling_name(s.name, ".tmp");
      if (fault("write", s.target)) return fail(errno);
      fd = ::openat(s.dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                    s.keep_mode ? mode_t{0600} : s.mode);
      if (fd >= 0)
        s.temp = name;
      else if (errno != EEXIST)
        return fail(errno);
    }
    if (fd < 0) return fail(EEXIST);
    bool ok = (!s.keep_mode || ::fchmod(fd, s.mode) == 0) && write_all(fd, *s.content)
              && ::fsync(fd) == 0;
    int err = errno;
    if (::close(fd) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (!ok) return fail(err);
    return std::nullopt;
  }

  // A hard link keeps the original (inode, permissions, even a symlink) at no
  // cost; where links are not supported, a copy of the checked content does.
  std::optional<error> back_up(step& s) {
    auto fail = [&](int err) {
      return error{"cannot back up " + s.shown + ": " + describe(err) + "; nothing was changed"};
    };
    int dir = s.dir.get();
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto name = sibling_name(s.name, ".bak");
      if (fault("backup", s.target)) return fail(errno);
      if (::linkat(dir, s.name.c_str(), dir, name.c_str(), 0) == 0) {
        s.backup = name;
        return std::nullopt;
      }
      if (errno == EEXIST) continue;
      if (errno != EPERM && errno != ENOTSUP && errno != EXDEV && errno != EMLINK
          && errno != ENOSYS)
        return fail(errno);
      int fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                        0600);
      if (fd < 0 && errno == EEXIST) continue;
      if (fd < 0) return fail(errno);
      s.backup = name;
      struct stat st {};
      bool ok = ::fstatat(dir, s.name.c_str(), &st, 0) == 0
                && ::fchmod(fd, st.st_mode & 07777) == 0 && write_all(fd, *s.expected)
                && ::fsync(fd) == 0;
      int err = errno;
      ::close(fd);
      if (!ok) return fail(err);
      return std::nullopt;
    }
    return fail(EEXIST);
  }

  std::optional<error> commit(step& s) {
    int rc = -1;
    int dir = s.dir.get();
    if (fault("commit", s.target)) {
      rc = -1;
    } else if (!s.write) {
      rc = ::unlinkat(dir, s.name.c_str(), 0);
    } else if (s.expected) {
      rc = ::renameat(dir, s.temp.c_str(), dir, s.name.c_str());
    } else {
#ifdef RENAME_NOREPLACE
      rc = ::renameat2(dir, s.temp.c_str(), dir, s.name.c_str(), RENAME_NOREPLACE);
      if (rc != 0 && (errno == EINVAL || errno == ENOSYS))  // file system without it
        rc = ::renameat(dir, s.temp.c_str(), dir, s.name.c_str());
#else
      rc = ::renameat(dir, s.temp.c_str(), dir, s.name.c_str());
#endif
    }
    if (rc != 0)
      return error{"cannot " + std::string(s.write ? "write " : "delete ") + s.shown + ": "
                   + describe(errno)};
    s.committed = true;
    if (s.write) s.temp.clear();  // it is the target now
    return std::nullopt;
  }

  status roll_back(const error& cause) {
    std::string failures;
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      if (!it->committed) continue;
      int dir = it->dir.get();
      if (it->backup.empty()) {
        if (::unlinkat(dir, it->name.c_str(), 0) != 0)
          failures += "; could not remove " + it->shown + ": " + describe(errno);
        continue;
      }
      if (::renameat(dir, it->backup.c_str(), dir, it->name.c_str()) != 0) {
        // Keep the backup: it is now the only copy of the original.
        failures += "; could not restore " + it->shown + " (its original is in "
                    + (fs::path(it->target).parent_path() / it->backup).native()
                    + "): " + describe(errno);
      }
      it->backup.clear();
    }
    if (failures.empty()) return error{cause.message + "; nothing was changed"};
    return error{cause.message + failures};
  }

  void finish() {
    std::set<std::pair<dev_t, ino_t>> synced;
    for (auto& s : steps_) {
      if (!s.backup.empty()) ::unlinkat(s.dir.get(), s.backup.c_str(), 0);
      s.backup.clear();
      // Make the renames and unlinks durable; best effort, they have happened.
      struct stat st {};
      if (::fstat(s.dir.get(), &st) == 0 && synced.emplace(st.st_dev, st.st_ino).second)
        ::fsync(s.dir.get());
    }
    created_dirs_.clear();
  }

  void discard() {
    for (auto& s : steps_) {
      if (!s.temp.empty()) ::unlinkat(s.dir.get(), s.temp.c_str(), 0);
      if (!s.backup.empty()) ::unlinkat(s.dir.get(), s.backup.c_str(), 0);
    }
    for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it)
      ::unlinkat(it->parent.get(), it->name.c_str(), AT_REMOVEDIR);
  }

  std::vector<step> steps_;
  const detail::fault_injector& inject_;
  std::vector<beneath::created_dir> created_dirs_;  // in creation order (parents first)
};

}  // namespace

status detail::apply(const std::vector<file_change>& changes, const fault_injector& inject) {
  std::vector<step> steps;
  for (const auto& c : changes) {
    if (c.resolved_path.empty() || fs::path(c.resolved_path).is_relative())
      return error{"cannot apply " + c.path + ": the change was not planned"};
    auto s = step_for(c.resolved_path, c.root, c.beneath_root);
    s.shown = c.path;
    switch (c.kind) {
      case change_kind::add:
        s.write = true;
        s.content = &c.new_content;
        steps.push_back(std::move(s));
        break;
      case change_kind::remove:
        s.expected = &c.old_content;
        steps.push_back(std::move(s));
        break;
      case change_kind::update:
        if (c.resolved_move_to.empty()) {
          s.write = true;
          s.content = &c.new_content;
          s.expected = &c.old_content;
          steps.push_back(std::move(s));
          break;
        }
        {
          auto to = step_for(c.resolved_move_to, c.move_root, c.move_beneath_root);
          to.shown = c.move_to.value_or(c.resolved_move_to);
          to.write = true;
          to.content = &c.new_content;
          // The moved file keeps the original's permissions.
          struct stat st {};
          if (::stat(c.resolved_path.c_str(), &st) == 0) {
            to.mode = st.st_mode & 07777;
            to.keep_mode = true;
          }
          steps.push_back(std::move(to));
          s.expected = &c.old_content;
          steps.push_back(std::move(s));
          break;
        }
    }
  }
  return transaction(std::move(steps), inject).run();
}

status apply(const std::vector<file_change>& changes) {
  return detail::apply(changes, nullptr);
}

result<std::vector<file_change>> apply_patch(const std::string& text, const std::string& cwd,
                                             const std::vector<std::string>& writable_roots) {
  auto parsed = parse(text);
  if (!parsed) return parsed.error();
  auto changes = plan(parsed.value(), cwd, writable_roots);
  if (!changes) return changes.error();
  if (auto applied = apply(changes.value()); !applied) return applied.error();
  return changes;
}

}  // namespace parley::patch
