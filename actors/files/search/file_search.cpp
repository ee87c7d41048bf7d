#include "actors/files/search/file_search.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <queue>


namespace parley::files::search {
namespace ranking {

constexpr uint32_t tier = 1u << 16;  // above any fuzzy score of a real path

std::u32string folded(const std::string& s) {
  auto cps = decode_utf8(s);
  for (auto& c : cps)
    if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
  return cps;
}

struct candidate {
  uint32_t score = 0;
  std::string path;
  size_t root = 0;
  size_t name_at = 0;
  bool is_dir = false;
  std::vector<uint32_t> indices;
};

/// The better of two: higher score, then the path first in byte order.
bool better(const candidate& a, const candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.path != b.path) return a.path < b.path;
  return a.root < b.root;
}

/// A root opened for the walk.
struct open_root {
  std::string given;  // as the client wrote it: the answer's `root`
  std::string real;   // what the descriptor is
  unique_fd fd;
};

json to_json(const candidate& c, const std::vector<open_root>& roots) {
  return json{{"root", roots[c.root].given},
              {"path", c.path},
              {"match_type", c.is_dir ? "directory" : "file"},
              {"file_name", c.path.substr(c.name_at)},
              {"score", c.score},
              {"indices", c.indices}};
}

}  // namespace ranking

ranker::ranker(const std::string& query)
    : parsed_(parse_pattern(query)), folded_(ranking::folded(query)) {
  if (folded_.find_first_of(U" \t\n\r") == std::u32string::npos) literal_ = literal_pattern(query);
}

std::optional<match> ranker::rank(std::string_view path, size_t name_at, bool is_dir) const {
  auto name = path.substr(name_at);
  auto named = [&] { return ranking::folded(std::string(name)) == folded_; };  // only on a match
  if (!is_dir && !literal_.atoms.empty()) {
    if (auto m = match_path(literal_, name)) {
      auto offset = static_cast<uint32_t>(decode_utf8(path.substr(0, name_at)).size());
      for (auto& i : m->indices) i += offset;
      m->score += named() ? 3 * ranking::tier : ranking::tier;
      return m;
    }
  }
  auto m = match_path(parsed_, path);
  if (m && is_dir && !folded_.empty() && named()) m->score += 2 * ranking::tier;
  return m;
}

answer fuzzy_file_search(const root_set& roots, const search_request& request) {
  using ranking::candidate;
  auto empty = json{{"files", json::array()}};
  // Every root is checked before anything is walked: one outside fails the
  // request. A relative root, or one that does not exist, finds nothing (as
  // in Codex).
  std::vector<ranking::open_root> open;
  for (const auto& given : request.roots) {
    auto normal = normal_path(given);
    if (!normal) continue;
    auto where = roots.locate(*normal);
    if (auto* f = std::get_if<failure>(&where)) return *f;
    auto opened = open_confined(roots, std::get<located>(where), O_RDONLY | O_DIRECTORY);
    if (auto* f = std::get_if<failure>(&opened)) {
      if (f->os_errno == ENOENT || f->os_errno == ENOTDIR) continue;
      return *f;
    }
    auto fd = std::move(std::get<unique_fd>(opened));
    auto real = path_of_fd(fd.get());
    bool seen = std::any_of(open.begin(), open.end(),
                            [&](const ranking::open_root& r) { return r.real == real; });
    if (!seen) open.push_back({given, real, std::move(fd)});
  }
  if (parse_pattern(request.query).atoms.empty() || open.empty()) return empty;
  ranker rank(request.query);

  auto worse_first = [](const candidate& a, const candidate& b) { return ranking::better(a, b); };
  std::priority_queue<candidate, std::vector<candidate>, decltype(worse_first)> best(worse_first);
  for (size_t i = 0; i < open.size(); ++i) {
    walk_options options;
    options.start_path = open[i].real;
    options.cancelled = request.cancelled.get();
    options.limits = request.limits;
    options.excluded = roots.home_forms();
    // A root inside this one is walked as itself: its entries count once.
    for (size_t k = 0; k < open.size(); ++k)
      if (k != i && is_within(open[k].real, open[i].real) && open[k].real != open[i].real)
        options.excluded.push_back(open[k].real);
    walk_tree(open[i].fd.get(), options, [&](const walk_entry& e) {
      auto m = rank.rank(e.path, e.name_at, e.is_dir);
      if (!m) return;
      candidate c;
      c.score = m->score;
      if (best.size() >= match_limit && c.score < best.top().score) return;
      c.path = std::string(e.path);
      c.root = i;
      c.name_at = e.name_at;
      c.is_dir = e.is_dir;
      c.indices = std::move(m->indices);
      if (best.size() < match_limit) {
        best.push(std::move(c));
      } else if (ranking::better(c, best.top())) {
        best.pop();
        best.push(std::move(c));
      }
    });
    if (request.cancelled && request.cancelled->load()) return empty;
  }
  std::vector<candidate> ranked;
  while (!best.empty()) {
    ranked.push_back(best.top());
    best.pop();
  }
  std::reverse(ranked.begin(), ranked.end());
  json files = json::array();
  for (const auto& c : ranked) files.push_back(ranking::to_json(c, open));
  return json{{"files", std::move(files)}};
}

}  // namespace parley::files::search
