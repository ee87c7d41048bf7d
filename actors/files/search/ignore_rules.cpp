#include "actors/files/search/ignore_rules.hpp"

namespace parley::files::search {

std::optional<ignore_file::rule> ignore_file::parse_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // Trailing spaces go, unless escaped.
  while (!line.empty() && line.back() == ' '
         && !(line.size() >= 2 && line[line.size() - 2] == '\\'))
    line.remove_suffix(1);
  if (line.empty() || line.front() == '#') return std::nullopt;
  rule r;
  if (line.front() == '!') {
    r.negated = true;
    line.remove_prefix(1);
  } else if (line.size() >= 2 && line[0] == '\\' && (line[1] == '#' || line[1] == '!')) {
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    r.dir_only = true;
    while (!line.empty() && line.back() == '/') line.remove_suffix(1);
  }
  if (line.empty()) return std::nullopt;
  r.anchored = line.find('/') != std::string_view::npos;
  if (line.front() == '/') line.remove_prefix(1);
  if (line.empty()) return std::nullopt;
  r.plain = true;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    token t;
    if (c == '\\' && i + 1 < line.size()) {
      t.c = line[++i];
    } else if (c == '?') {
      t.what = token::op::any_char;
    } else if (c == '*') {
      bool starts_segment = i == 0 || line[i - 1] == '/';
      if (i + 1 < line.size() && line[i + 1] == '*' && starts_segment
          && (i + 2 == line.size() || line[i + 2] == '/')) {
        if (i + 2 == line.size()) {
          t.what = token::op::any_path;
          i += 1;
        } else {
          t.what = token::op::any_dirs;  // "**/": nothing, or whole directories
          i += 2;
        }
      } else {
        t.what = token::op::star;
        while (i + 1 < line.size() && line[i + 1] == '*') ++i;
      }
    } else if (c == '[') {
      size_t j = i + 1;
      token cls;
      cls.what = token::op::char_class;
      if (j < line.size() && (line[j] == '!' || line[j] == '^')) {
        cls.negated_class = true;
        ++j;
      }
      bool closed = false;
      for (bool first = true; j < line.size(); first = false) {
        if (line[j] == ']' && !first) {
          closed = true;
          break;
        }
        char lo = line[j];
        if (lo == '\\' && j + 1 < line.size()) lo = line[++j];
        char hi = lo;
        if (j + 2 < line.size() && line[j + 1] == '-' && line[j + 2] != ']') {
          hi = line[j + 2];
          if (hi == '\\' && j + 3 < line.size()) hi = line[++j + 2];
          j += 2;
        }
        cls.ranges += lo;
        cls.ranges += hi;
        ++j;
      }
      if (closed) {
        t = std::move(cls);
        i = j;
      } else {
        t.c = c;  // an unclosed '[' is a literal
      }
    } else {
      t.c = c;
    }
    if (t.what != token::op::literal) r.plain = false;
    r.tokens.push_back(std::move(t));
  }
  if (r.plain)
    for (const auto& t : r.tokens) r.literal += t.c;
  return r;
}

ignore_file ignore_file::parse(std::string_view text) {
  ignore_file f;
  while (!text.empty() && f.rules_.size() < max_rules) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (auto r = parse_line(line)) f.rules_.push_back(std::move(*r));
  }
  return f;
}

/// A small NFA run over `s`: state i = "token i is next".
bool ignore_file::glob_match(const std::vector<token>& tokens, std::string_view s) {
  size_t n = tokens.size();
  thread_local std::vector<char> cur, next;
  cur.assign(n + 1, 0);
  auto close = [&](std::vector<char>& set) {
    for (size_t i = 0; i < n; ++i)
      if (set[i] && tokens[i].what != token::op::literal && tokens[i].what != token::op::any_char
          && tokens[i].what != token::op::char_class)
        set[i + 1] = 1;  // a star of any kind may match nothing
  };
  cur[0] = 1;
  close(cur);
  for (char c : s) {
    next.assign(n + 1, 0);
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (!cur[i]) continue;
      const auto& t = tokens[i];
      switch (t.what) {
        case token::op::literal:
          if (c == t.c) next[i + 1] = 1;
          break;
        case token::op::any_char:
          if (c != '/') next[i + 1] = 1;
          break;
        case token::op::char_class: {
          if (c == '/') break;
          bool in = false;
          for (size_t k = 0; k + 1 < t.ranges.size(); k += 2)
            if (c >= t.ranges[k] && c <= t.ranges[k + 1]) in = true;
          if (in != t.negated_class) next[i + 1] = 1;
          break;
        }
        case token::op::star:
          if (c != '/') next[i] = 1;
          break;
        case token::op::any_path:
          next[i] = 1;
          break;
        case token::op::any_dirs:
          next[i] = 1;
          if (c == '/') next[i + 1] = 1;
          break;
      }
    }
    close(next);
    for (char v : next) any = any || v;
    if (!any) return false;
    cur.swap(next);
  }
  return cur[n] != 0;
}

std::optional<bool> ignore_file::verdict(std::string_view relative, std::string_view name,
                                         bool is_dir) const {
  for (auto r = rules_.rbegin(); r != rules_.rend(); ++r) {
    if (r->dir_only && !is_dir) continue;
    auto subject = r->anchored ? relative : name;
    bool hit = r->plain ? subject == r->literal : glob_match(r->tokens, subject);
    if (hit) return !r->negated;
  }
  return std::nullopt;
}

}  // namespace parley::files::search
