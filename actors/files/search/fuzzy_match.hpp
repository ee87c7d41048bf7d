#pragma once
// The fuzzy matcher behind fuzzyFileSearch: a query against a path, scored
// the way Codex 0.169 ranks them (an fzf-style optimal alignment, paths
// mode), so a client sees the same order from parley as from Codex.
//
// A query is whitespace-separated atoms; every atom must match (their
// scores add up). An atom is a fuzzy subsequence unless it is written
//   'abc  a substring        ^abc  a prefix        abc$  a suffix
//   ^abc$ the whole path     !abc  must NOT contain abc (scores nothing)
// Matching ignores ASCII case. A matched character scores 16; one at a word
// start scores more (after '/' 9, after whitespace or another non-word
// character 8, a camelCase hump or a digit run's start 5), and the
// query's first character's bonus counts twice; a run of consecutive
// characters keeps the bonus its first character had (at least 4); a gap
// costs 3 for its first skipped character and 1 for each further one.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::files::search {

/// One atom of a parsed query.
struct atom {
  enum class kind { fuzzy, substring, prefix, suffix, exact };
  kind how = kind::fuzzy;
  bool negated = false;
  std::u32string text;  // lower-cased code points
};

/// A query split into atoms ("" or only whitespace: no atoms).
struct pattern {
  std::vector<atom> atoms;
  std::string raw;  // the query as sent
};

pattern parse_pattern(std::string_view query);

/// The whole query as one fuzzy atom, its syntax characters taken literally.
pattern literal_pattern(std::string_view query);

/// A path's score and the positions (code points) of the matched characters,
/// sorted and unique.
struct match {
  uint32_t score = 0;
  std::vector<uint32_t> indices;
};

/// Scores `text` (decoded UTF-8; invalid bytes count as one character each)
/// against `p`; nullopt when an atom does not match, or when `p` has no atom.
std::optional<match> match_path(const pattern& p, std::string_view text);

/// Decodes UTF-8 into code points (an invalid byte becomes U+FFFD).
std::u32string decode_utf8(std::string_view s);

}  // namespace parley::files::search
