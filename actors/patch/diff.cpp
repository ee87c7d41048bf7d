// Unified diffs (diff -u, 3 lines of context) of whole file contents.

#include "actors/patch/apply_patch.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::patch {
namespace {

using std::string_view;

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

}  // namespace

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

}  // namespace parley::patch
