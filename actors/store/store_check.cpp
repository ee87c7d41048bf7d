#include "actors/store/store_check.hpp"

#include <algorithm>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "actors/core/errors.hpp"
#include "actors/store/local_store.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/thread_index.hpp"

namespace parley::store {

namespace fs = std::filesystem;

namespace {

/// A rollout as the index should know it.
struct rollout_info {
  std::string path;
  bool archived = false;
  bool readable = false;
  std::string id;  // of its session metadata
};

std::string canonical(const std::string& path) {
  std::error_code ec;
  auto p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

/// What is wrong with index entry `e`, or nothing.
std::string entry_problem(const index_entry& e,
                          const std::unordered_map<std::string, rollout_info>& rollouts) {
  std::error_code ec;
  auto points = "points to " + e.path + ", ";
  if (!fs::exists(e.path, ec)) return points + "which does not exist";
  auto r = rollouts.find(canonical(e.path));
  if (r == rollouts.end())
    return points + "which is not a rollout under sessions/ or archived_sessions/";
  const auto& info = r->second;
  if (!info.readable) return points + "which is unreadable";
  if (info.id != e.id) return points + "which holds thread " + info.id;
  if (e.archived && !info.archived) return "says archived, but " + e.path + " is not";
  if (!e.archived && info.archived) return "says not archived, but " + e.path + " is";
  return {};
}

void check_index(const std::string& home, const std::vector<rollout_info>& listed,
                 store_report& report) {
  auto path = index_path(home);
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  auto add = [&report](std::string subject, std::string reason) {
    report.findings.push_back({finding::kind::index, std::move(subject), 0, 0, std::move(reason)});
    ++report.index_findings;
  };
  std::vector<index_entry> entries;
  try {
    thread_index index{path};
    entries = index.all();
  } catch (const std::exception& e) {
    return add(path, std::string{"cannot be read: "} + e.what());
  }
  std::unordered_map<std::string, rollout_info> by_path;
  for (auto& r : listed) by_path.emplace(canonical(r.path), r);
  std::sort(entries.begin(), entries.end(),
            [](const index_entry& a, const index_entry& b) { return a.path < b.path; });
  std::unordered_set<std::string> indexed;
  for (auto& e : entries) {
    indexed.insert(e.id);
    if (auto problem = entry_problem(e, by_path); !problem.empty()) add(e.id, problem);
  }
  for (auto& r : listed) {
    if (!r.readable || indexed.count(r.id)) continue;
    // A thread is indexed once it has a turn (as Codex lists them).
    auto t = read_rollout(r.path);
    if (t && t->meta.turns.empty()) continue;
    add(r.id, "missing; its rollout is " + r.path);
  }
}

}  // namespace

store_report check_store(const std::string& home) {
  store_report report;
  std::vector<rollout_info> listed;
  for (auto sub : {"sessions", "archived_sessions"}) {
    auto paths = list_rollouts(home + "/" + sub);
    std::sort(paths.begin(), paths.end());
    for (auto& path : paths) {
      auto scan = scan_rollout(path);
      ++report.rollouts;
      listed.push_back(
          {path, std::string{sub} == "archived_sessions", !scan.unreadable(), scan.thread_id});
      if (scan.sound()) continue;
      report.damaged.push_back(path);
      if (scan.unreadable()) ++report.unreadable_count;
      for (auto& f : scan.findings) report.findings.push_back(std::move(f));
    }
  }
  check_index(home, listed, report);
  return report;
}

store_repair repair_store(const std::string& home, const store_report& report, int64_t now_unix_s) {
  store_repair out;
  for (auto& path : report.damaged) {
    rollout_repair r;
    r.path = path;
    r.scan = scan_rollout(path);  // as it is now: the lock keeps it so
    if (r.scan.sound()) continue;
    auto kept = repair_rollout(path, r.scan, now_unix_s);
    if (kept)
      r.kept = std::move(*kept);
    else
      r.error = message_of(kept.error());
    r.lines = r.scan.salvaged.size();
    r.scan.salvaged.clear();  // written: not kept in memory
    out.rollouts.push_back(std::move(r));
  }
  if (!report.sound()) out.indexed = rebuild_index(home);
  return out;
}

}  // namespace parley::store
