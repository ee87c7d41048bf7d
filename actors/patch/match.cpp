// Locating hunks in a file (leniently, as Codex does) and applying them to
// its content in memory.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "actors/patch/apply_patch.hpp"
#include "actors/patch/detail.hpp"

namespace parley::patch {
namespace {

using detail::rtrim;
using detail::trim;
using std::string_view;

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

}  // namespace

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

namespace {

/// Replacements must not overlap (only an append without anchor can land
/// inside a later hunk's lines; applying both would garble the file).
std::optional<error> check_overlaps(std::vector<replacement>& replacements,
                                    const std::string& path) {
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const auto& x, const auto& y) { return x.start < y.start; });
  for (size_t i = 1; i < replacements.size(); ++i) {
    const auto& prev = replacements[i - 1];
    if (replacements[i].start < prev.start + prev.length) {
      return error{"hunk " + std::to_string(std::max(prev.hunk, replacements[i].hunk)) + " of "
                   + path + " does not apply: it overlaps hunk "
                   + std::to_string(std::min(prev.hunk, replacements[i].hunk))};
    }
  }
  return std::nullopt;
}

/// Applies sorted, non-overlapping replacements back to front (so earlier
/// positions stay valid); like Codex, the result ends with a line break.
std::string apply_replacements(std::vector<std::string> lines,
                               const std::vector<replacement>& replacements, bool crlf) {
  for (auto it = replacements.rbegin(); it != replacements.rend(); ++it) {
    auto first = lines.begin() + static_cast<std::ptrdiff_t>(it->start);
    first = lines.erase(first, first + static_cast<std::ptrdiff_t>(it->length));
    lines.insert(first, it->lines.begin(), it->lines.end());
  }
  const char* eol = crlf ? "\r\n" : "\n";
  std::string out;
  for (const auto& line : lines) {
    out += line;
    out += eol;
  }
  return out;
}

/// Where one hunk goes in `lines` (searching from `next`, which it moves on)
/// and what replaces the lines it matched.
result<replacement> place_hunk(const std::vector<std::string>& lines, const hunk& h, size_t k,
                               const std::string& path, size_t& next) {
  auto fail = [&](const std::string& why) {
    return error{"hunk " + std::to_string(k + 1) + " of " + path + " does not apply: " + why};
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
    if (!h.anchors.empty()) next = at;
    return replacement{at, 0, h.new_lines(), k + 1};
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
  return replacement{*at, old_lines.size(), std::move(replaced), k + 1};
}

}  // namespace

result<std::string> detail::apply_hunks(const std::string& original, const file_patch& f) {
  bool crlf = uses_crlf(original);
  auto lines = split_file_lines(original, crlf);
  std::vector<replacement> replacements;
  size_t next = 0;
  for (size_t k = 0; k < f.hunks.size(); ++k) {
    auto placed = place_hunk(lines, f.hunks[k], k, f.path, next);
    if (!placed) return placed.error();
    replacements.push_back(std::move(placed).value());
  }
  if (auto err = check_overlaps(replacements, f.path)) return *err;
  return apply_replacements(std::move(lines), replacements, crlf);
}

}  // namespace parley::patch
