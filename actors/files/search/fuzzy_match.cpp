#include "actors/files/search/fuzzy_match.hpp"

#include <algorithm>
#include <climits>

namespace parley::files::search {
namespace scoring {

// The weights (see the header): the same numbers fzf and Codex's matcher use.
constexpr int32_t match_score = 16;
constexpr int32_t gap_start = 3;
constexpr int32_t gap_extension = 1;
constexpr int32_t bonus_boundary = 8;
constexpr int32_t bonus_after_white = bonus_boundary;  // in paths, no more than '_'
constexpr int32_t bonus_after_slash = bonus_boundary + 1;
constexpr int32_t bonus_non_word = bonus_boundary;
constexpr int32_t bonus_camel = bonus_boundary - gap_start;
constexpr int32_t bonus_consecutive = gap_start + gap_extension;
constexpr int32_t first_char_factor = 2;
constexpr int32_t none = INT32_MIN / 4;

enum class cls : uint8_t { white, non_word, slash, lower, upper, letter, digit };

cls class_of(char32_t c) {
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') return cls::white;
  if (c == '/') return cls::slash;
  if (c >= 'a' && c <= 'z') return cls::lower;
  if (c >= 'A' && c <= 'Z') return cls::upper;
  if (c >= '0' && c <= '9') return cls::digit;
  if (c < 0x80) return cls::non_word;
  return cls::letter;  // beyond ASCII: a letter of no case
}

bool is_word(cls c) {
  return c == cls::lower || c == cls::upper || c == cls::letter || c == cls::digit;
}

/// What a character at a position is worth beyond match_score, given the
/// class of the one before it (a path starts as if after a '/').
int32_t bonus(cls prev, cls cur) {
  if (is_word(cur)) {
    if (prev == cls::white) return bonus_after_white;
    if (prev == cls::slash) return bonus_after_slash;
    if (prev == cls::non_word) return bonus_boundary;
  }
  if ((prev == cls::lower && cur == cls::upper) || (prev != cls::digit && cur == cls::digit))
    return bonus_camel;
  if (cur == cls::white) return bonus_after_white;
  if (cur == cls::non_word) return bonus_non_word;
  return 0;  // a '/' itself earns nothing: the name after it does
}

char32_t fold(char32_t c) {
  return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

/// A path prepared once for all of a query's atoms.
struct subject {
  std::u32string folded;
  std::vector<int32_t> bonus;
};

subject prepare(std::string_view text) {
  subject s;
  auto cps = decode_utf8(text);
  s.folded.resize(cps.size());
  s.bonus.resize(cps.size());
  cls prev = cls::slash;
  for (size_t j = 0; j < cps.size(); ++j) {
    auto c = class_of(cps[j]);
    s.folded[j] = fold(cps[j]);
    s.bonus[j] = bonus(prev, c);
    prev = c;
  }
  return s;
}

/// The score of `n` consecutive characters from `start`.
int32_t run_score(const subject& s, size_t start, size_t n) {
  int32_t first = s.bonus[start];
  int32_t score = match_score + first * first_char_factor;
  for (size_t j = start + 1; j < start + n; ++j) {
    int32_t b = s.bonus[j];
    if (b >= bonus_boundary && b > first) {
      first = b;  // a new word inside the run: it starts its own bonus
    } else {
      b = std::max({b, first, bonus_consecutive});
    }
    score += match_score + b;
  }
  return score;
}

struct atom_result {
  int32_t score = 0;
  size_t start = 0, length = 0;  // a contiguous match...
  std::vector<uint32_t> spread;  // ...or a fuzzy one's positions
};

bool equal_at(const subject& s, size_t at, const std::u32string& needle) {
  return at + needle.size() <= s.folded.size()
         && std::equal(needle.begin(), needle.end(), s.folded.begin() + static_cast<long>(at));
}

/// The best-scoring place for a contiguous atom (the earliest of equals).
std::optional<atom_result> contiguous(const subject& s, const atom& a) {
  const auto& needle = a.text;
  size_t m = s.folded.size();
  if (needle.size() > m) return std::nullopt;
  auto try_at = [&](size_t at) -> std::optional<atom_result> {
    if (!equal_at(s, at, needle)) return std::nullopt;
    return atom_result{run_score(s, at, needle.size()), at, needle.size(), {}};
  };
  switch (a.how) {
    case atom::kind::prefix:
      return try_at(0);
    case atom::kind::suffix:
      return try_at(m - needle.size());
    case atom::kind::exact:
      if (needle.size() != m) return std::nullopt;
      return try_at(0);
    default:
      break;
  }
  std::optional<atom_result> best;
  for (size_t at = 0; at + needle.size() <= m; ++at) {
    auto r = try_at(at);
    if (r && (!best || r->score > best->score)) best = std::move(r);
  }
  return best;
}

/// Scratch rows for the alignment, reused by a thread's searches.
struct table {
  std::vector<int32_t> score, first;
  std::vector<int32_t> from;
};

/// The best fuzzy alignment of `needle` in `s`: for each query character i
/// and text position j, the best score of an alignment that puts i at j,
/// reached either straight after i-1 (a run) or over a gap.
std::optional<atom_result> fuzzy(const subject& s, const std::u32string& needle) {
  size_t n = needle.size(), m = s.folded.size();
  if (n == 0 || n > m) return std::nullopt;
  // A quick subsequence test first: most paths fail here.
  size_t lo = 0, k = 0;
  for (size_t j = 0; j < m && k < n; ++j) {
    if (s.folded[j] == needle[k]) {
      if (k == 0) lo = j;
      ++k;
    }
  }
  if (k < n) return std::nullopt;
  size_t hi = m;  // one past the last place the last character can be
  for (size_t j = m, r = n; j-- > 0 && r > 0;) {
    if (s.folded[j] == needle[r - 1]) {
      if (r == n) hi = j + 1;
      --r;
    }
  }
  size_t w = hi - lo;
  thread_local table t;
  t.score.assign(n * w, none);
  t.first.assign(n * w, 0);
  t.from.assign(n * w, -1);
  auto at = [w](size_t i, size_t j) { return i * w + j; };
  for (size_t j = 0; j < w; ++j) {
    if (s.folded[lo + j] != needle[0]) continue;
    int32_t b = s.bonus[lo + j];
    t.score[at(0, j)] = match_score + b * first_char_factor;
    t.first[at(0, j)] = b;
  }
  for (size_t i = 1; i < n; ++i) {
    int32_t gap_best = none;  // best row i-1 entry ending two or more back, net of its gap
    int32_t gap_from = -1;
    for (size_t j = i; j < w; ++j) {
      if (j >= 2) {
        int32_t extended = gap_best == none ? none : gap_best - gap_extension;
        int32_t opened = t.score[at(i - 1, j - 2)];
        opened = opened == none ? none : opened - gap_start;
        if (opened > extended) {
          gap_best = opened;
          gap_from = static_cast<int32_t>(j - 2);
        } else {
          gap_best = extended;
        }
      }
      if (s.folded[lo + j] != needle[i]) continue;
      int32_t b = s.bonus[lo + j];
      int32_t best = none, first = 0, from = -1;
      if (int32_t prev = t.score[at(i - 1, j - 1)]; prev != none) {
        int32_t fb = t.first[at(i - 1, j - 1)];
        int32_t cb = b;
        int32_t run_first = b;
        if (!(b >= bonus_boundary && b > fb)) {
          cb = std::max({b, fb, bonus_consecutive});
          run_first = fb;
        }
        best = prev + match_score + cb;
        first = run_first;
        from = static_cast<int32_t>(j - 1);
      }
      if (gap_best != none && gap_best + match_score + b > best) {
        best = gap_best + match_score + b;
        first = b;
        from = gap_from;
      }
      t.score[at(i, j)] = best;
      t.first[at(i, j)] = first;
      t.from[at(i, j)] = from;
    }
  }
  int32_t best = none;
  size_t end = 0;
  for (size_t j = n - 1; j < w; ++j)
    if (t.score[at(n - 1, j)] > best) {
      best = t.score[at(n - 1, j)];
      end = j;
    }
  if (best == none) return std::nullopt;
  atom_result r;
  r.score = best;
  r.spread.resize(n);
  for (size_t i = n, j = end; i-- > 0;) {
    r.spread[i] = static_cast<uint32_t>(lo + j);
    if (i > 0) j = static_cast<size_t>(t.from[at(i, j)]);
  }
  return r;
}

}  // namespace scoring

std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!ok) {
      out.push_back(U'\uFFFD');
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

pattern parse_pattern(std::string_view query) {
  pattern p;
  p.raw = std::string(query);
  // Atoms split on whitespace; "\ " keeps a space inside one.
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < query.size(); ++i) {
    char c = query[i];
    if (c == '\\' && i + 1 < query.size() && query[i + 1] == ' ') {
      word += ' ';
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!word.empty()) {
        words.push_back(std::move(word));
      }
      word.clear();
      continue;
    }
    word += c;
  }
  if (!word.empty()) {
    words.push_back(std::move(word));
  }
  for (auto& w : words) {
    atom a;
    std::string_view v = w;
    if (v.front() == '!') {
      a.negated = true;
      a.how = atom::kind::substring;
      v.remove_prefix(1);
    }
    bool prefix = false, suffix = false, quoted = false;
    if (!v.empty() && v.front() == '^') {
      prefix = true;
      v.remove_prefix(1);
    } else if (!v.empty() && v.front() == '\'') {
      a.how = atom::kind::substring;
      v.remove_prefix(1);
      quoted = true;  // its '$' is a character, not an anchor
    } else if (!v.empty() && v.front() == '\\' && v.size() > 1
               && (v[1] == '^' || v[1] == '!' || v[1] == '\'')) {
      v.remove_prefix(1);  // a literal ^, ! or '
    }
    std::string text(v);
    if (text.size() >= 2 && text.compare(text.size() - 2, 2, "\\$") == 0) {
      text.erase(text.size() - 2, 1);  // a literal $
    } else if (!quoted && !text.empty() && text.back() == '$') {
      suffix = true;
      text.pop_back();
    }
    if (prefix && suffix) a.how = atom::kind::exact;
    else if (prefix) a.how = atom::kind::prefix;
    else if (suffix) a.how = atom::kind::suffix;
    if (text.empty()) continue;
    for (char32_t c : decode_utf8(text)) a.text.push_back(scoring::fold(c));
    p.atoms.push_back(std::move(a));
  }
  return p;
}

/// Whether an ASCII atom's characters cannot all be in `text`, in order:
/// the cheap test that turns most paths away before any scoring.
bool surely_missing(const atom& a, std::string_view text) {
  if (a.negated) return false;
  size_t k = 0;
  for (char32_t c : a.text)
    if (c >= 0x80) return false;
  for (size_t j = 0; j < text.size() && k < a.text.size(); ++j) {
    auto c = static_cast<unsigned char>(text[j]);
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c + ('a' - 'A'));
    if (c == a.text[k]) ++k;
  }
  return k < a.text.size();
}

pattern literal_pattern(std::string_view query) {
  pattern p;
  p.raw = std::string(query);
  atom a;
  for (char32_t c : decode_utf8(query)) a.text.push_back(scoring::fold(c));
  if (!a.text.empty()) p.atoms.push_back(std::move(a));
  return p;
}

std::optional<match> match_path(const pattern& p, std::string_view text) {
  if (p.atoms.empty()) return std::nullopt;
  for (const auto& a : p.atoms)
    if (surely_missing(a, text)) return std::nullopt;
  auto s = scoring::prepare(text);
  match result;
  int64_t total = 0;
  for (const auto& a : p.atoms) {
    auto r = a.how == atom::kind::fuzzy ? scoring::fuzzy(s, a.text) : scoring::contiguous(s, a);
    if (a.negated) {
      if (r) return std::nullopt;
      continue;
    }
    if (!r) return std::nullopt;
    total += r->score;
    if (r->spread.empty()) {
      for (size_t j = r->start; j < r->start + r->length; ++j)
        result.indices.push_back(static_cast<uint32_t>(j));
    } else {
      result.indices.insert(result.indices.end(), r->spread.begin(), r->spread.end());
    }
  }
  std::sort(result.indices.begin(), result.indices.end());
  result.indices.erase(std::unique(result.indices.begin(), result.indices.end()),
                       result.indices.end());
  result.score = static_cast<uint32_t>(std::max<int64_t>(total, 0));
  return result;
}

}  // namespace parley::files::search
