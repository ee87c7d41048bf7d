#pragma once
// fuzzyFileSearch as a blocking function: the roots walked (tree_walk.hpp),
// every entry scored (fuzzy_match.hpp) and ranked as Codex 0.169 ranks
// them, the best 50 answered. Confined: a root must lie within the roots
// the connection may see (the same as fs/*), parley's home is never
// walked, and no symbolic link is followed.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/files/file_ops.hpp"
#include "actors/files/search/fuzzy_match.hpp"
#include "actors/files/search/tree_walk.hpp"

namespace parley::files::search {

constexpr size_t match_limit = 50;  // Codex's MATCH_LIMIT

struct search_request {
  std::string query;
  std::vector<std::string> roots;
  std::shared_ptr<std::atomic<bool>> cancelled;  // set: answer an empty list
  walk_limits limits;
};

/// An entry's rank as Codex 0.169 gives it. A file whose name alone holds
/// the query (one word, taken literally) is scored on its name, one tier
/// (65536) above any path score, two more if the name is the query; a
/// directory named exactly the query gets two tiers on its path score;
/// anything else is scored on its path by the parsed query.
struct ranker {
  explicit ranker(const std::string& query);
  std::optional<match> rank(std::string_view path, size_t name_at, bool is_dir) const;

 private:
  pattern parsed_;
  pattern literal_;  // no atom when the query has whitespace
  std::u32string folded_;
};

/// {"files": [...]}, or a failure for a root outside the roots.
answer fuzzy_file_search(const root_set& roots, const search_request& request);

}  // namespace parley::files::search
