#include "actors/approval/rules/glob.hpp"

#include <string_view>
#include <vector>

namespace parley::rules {

namespace {

std::vector<std::string_view> segments_of(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty()) return out;
  size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

/// The index just past the `]` closing the class that starts at `open` (the
/// `[`), or npos when it is not closed. A `]` right after `[`, `[!` or `[^`
/// is a member, not the end, as in POSIX shells.
size_t class_end(std::string_view glob, size_t open) {
  size_t i = open + 1;
  if (i < glob.size() && (glob[i] == '!' || glob[i] == '^')) ++i;
  if (i < glob.size() && glob[i] == ']') ++i;
  while (i < glob.size() && glob[i] != ']' && glob[i] != '/') ++i;
  return i < glob.size() && glob[i] == ']' ? i + 1 : std::string_view::npos;
}

/// Whether `c` is in the class glob[open, end).
bool in_class(std::string_view glob, size_t open, size_t end, char c) {
  auto byte = [](char x) { return static_cast<unsigned char>(x); };
  size_t i = open + 1;
  size_t close = end - 1;
  bool negated = glob[i] == '!' || glob[i] == '^';
  if (negated) ++i;
  bool found = false;
  while (i < close) {
    // `a-z` is a range; a `-` first or last in the class is itself.
    if (i + 2 < close && glob[i + 1] == '-') {
      found = found || (byte(glob[i]) <= byte(c) && byte(c) <= byte(glob[i + 2]));
      i += 3;
    } else {
      found = found || glob[i] == c;
      ++i;
    }
  }
  return found != negated;
}

/// One segment against one glob segment (no `/` in either).
bool segment_matches(std::string_view glob, std::string_view s) {
  size_t g = 0, i = 0;
  // Where to resume after the last `*`: the glob just past it, and the
  // character of `s` it has absorbed up to so far.
  size_t star_g = std::string_view::npos, star_i = 0;
  while (i < s.size()) {
    if (g < glob.size() && glob[g] == '*') {
      star_g = ++g;
      star_i = i;
      continue;
    }
    if (g < glob.size()) {
      size_t next = g + 1;
      bool ok = false;
      if (glob[g] == '?') {
        ok = true;
      } else if (glob[g] == '[' && class_end(glob, g) != std::string_view::npos) {
        next = class_end(glob, g);
        ok = in_class(glob, g, next, s[i]);
      } else {
        ok = glob[g] == s[i];
      }
      if (ok) {
        g = next;
        ++i;
        continue;
      }
    }
    if (star_g == std::string_view::npos) return false;
    g = star_g;  // let the last `*` absorb one more character
    i = ++star_i;
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

bool segments_match(const std::vector<std::string_view>& glob, size_t g,
                    const std::vector<std::string_view>& path, size_t p) {
  if (g == glob.size()) return p == path.size();
  if (glob[g] == "**") {
    while (g + 1 < glob.size() && glob[g + 1] == "**") ++g;  // `**/**` is `**`
    for (size_t skip = p; skip <= path.size(); ++skip)
      if (segments_match(glob, g + 1, path, skip)) return true;
    return false;
  }
  return p < path.size() && segment_matches(glob[g], path[p])
         && segments_match(glob, g + 1, path, p + 1);
}

}  // namespace

std::optional<glob_problem> check_glob(const std::string& glob) {
  if (glob.empty()) return glob_problem{0, "the glob is empty"};
  for (size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] != '[') continue;
    auto end = class_end(glob, i);
    if (end == std::string_view::npos)
      return glob_problem{i, "the character class opened here is not closed with `]`"};
    i = end - 1;
  }
  return std::nullopt;
}

bool glob_matches(const std::string& glob, const std::string& path) {
  return segments_match(segments_of(glob), 0, segments_of(path), 0);
}

std::string normalise_path(const std::string& path, const std::string& cwd) {
  bool relative = path.empty() || path[0] != '/';
  std::string joined = relative && !cwd.empty() ? cwd + "/" + path : path;
  bool absolute = !joined.empty() && joined[0] == '/';
  std::vector<std::string_view> kept;
  for (auto seg : segments_of(joined)) {
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!kept.empty() && kept.back() != "..")
        kept.pop_back();
      else if (!absolute)
        kept.push_back(seg);  // a relative path may climb above its start
      continue;
    }
    kept.push_back(seg);
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i > 0) out += '/';
    out += kept[i];
  }
  return out.empty() ? "." : out;
}

std::optional<std::string> relative_under(const std::string& path, const std::string& dir) {
  if (path == dir) return std::string{};
  if (dir == "/") return path.size() > 1 && path[0] == '/' ? std::optional{path.substr(1)} : std::nullopt;
  if (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/')
    return path.substr(dir.size() + 1);
  return std::nullopt;
}

}  // namespace parley::rules
