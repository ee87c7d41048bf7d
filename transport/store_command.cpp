#include "transport/store_command.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "actors/core/config.hpp"
#include "actors/core/errors.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/store_check.hpp"
#include "actors/store/store_prune.hpp"

namespace parley {

namespace {

/// "checked 4 rollout(s) under H: all sound" / "...: 1 unreadable, 2
/// damaged, 0 index finding(s)".
std::string summary(const std::string& home, const store::store_report& r) {
  auto out = "checked " + std::to_string(r.rollouts) + " rollout(s) under " + home + ": ";
  if (r.sound()) return out + "all sound";
  return out + std::to_string(r.unreadable_count) + " unreadable, "
         + std::to_string(r.damaged.size() - r.unreadable_count) + " damaged, "
         + std::to_string(r.index_findings) + " index finding(s)";
}

std::string repaired_line(const store::rollout_repair& r) {
  if (!r.error.empty()) return "not repaired " + r.path + ": " + r.error;
  return "repaired " + r.path + ": " + std::to_string(r.lines - 1) + " record(s) kept, "
         + std::to_string(r.scan.dropped) + " line(s) dropped"
         + (r.scan.meta_rebuilt ? ", session metadata rebuilt" : "") + "; the original is "
         + r.kept;
}

}  // namespace

int run_store_check(const store_check_request& req) {
  std::error_code ec;
  if (!std::filesystem::is_directory(req.home, ec)) {
    std::cerr << "parley: no home at " << req.home
              << "\nusage: parley store check [--home DIR] [--repair]; see `parley store check "
                 "--help`\n";
    return 2;
  }
  // As `store reindex`: never beside a server writing the same home.
  auto lock = store::home_lock::acquire(req.home);
  if (!lock) {
    std::cerr << "parley: " << message_of(lock.error()) << "\n";
    return 1;
  }
  auto report = store::check_store(req.home);
  for (auto& f : report.findings) std::cout << to_string(f) << "\n";
  if (!req.repair || report.sound()) {
    std::cout << summary(req.home, report) << "\n";
    return report.sound() ? 0 : 1;
  }
  auto done = store::repair_store(req.home, report, static_cast<int64_t>(std::time(nullptr)));
  for (auto& r : done.rollouts) std::cout << repaired_line(r) << "\n";
  if (done.indexed)
    std::cout << "reindexed " << *done.indexed << " thread(s)\n";
  else
    std::cout << "not reindexed: " << message_of(done.indexed.error()) << "\n";
  // What is left after the repair, checked as anew.
  auto after = store::check_store(req.home);
  for (auto& f : after.findings) std::cout << "still " << to_string(f) << "\n";
  std::cout << summary(req.home, report)
            << (after.sound() ? "; all repaired"
                              : "; " + std::to_string(after.findings.size()) + " still wrong")
            << "\n";
  return after.sound() ? 0 : 1;
}

int run_store_prune(const store_prune_request& req) {
  std::chrono::milliseconds age{};
  if (!parse_duration(req.older_than, age) || age.count() <= 0) {
    std::cerr << "parley: --older-than: not a duration: \"" << req.older_than
              << "\" (as 90d, 2w, 12h)\n";
    return 2;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(req.home, ec)) {
    std::cerr << "parley: no home at " << req.home << "\n";
    return 2;
  }
  // Beside no server: none of the home's threads is loaded or runs a turn.
  auto lock = store::home_lock::acquire(req.home);
  if (!lock) {
    std::cerr << "parley: " << message_of(lock.error())
              << " (a running server prunes by its own --prune-older-than)\n";
    return 1;
  }
  store::prune_request pr;
  pr.home = req.home;
  pr.cutoff_s = static_cast<int64_t>(std::time(nullptr))
                - std::chrono::duration_cast<std::chrono::seconds>(age).count();
  pr.archived_only = req.archived_only;
  pr.dry_run = req.dry_run;
  if (!req.tenant.empty()) pr.tenant = req.tenant;
  auto done = store::prune_store(pr);
  if (!done) {
    std::cerr << "parley: " << message_of(done.error()) << "\n";
    return 1;
  }
  size_t failed = 0;
  for (auto& t : done->threads) {
    if (!t.error.empty()) {
      ++failed;
      std::cout << "not pruned " << t.id << " " << t.path << ": " << t.error << "\n";
    } else {
      std::cout << (req.dry_run ? "would prune " : "pruned ") << t.id << " " << t.path << "\n";
    }
  }
  std::cout << (req.dry_run ? "would prune " : "pruned ") << done->threads.size() - failed
            << " thread(s), " << done->bytes << " byte(s) under " << req.home;
  if (done->kept_pending) std::cout << "; kept " << done->kept_pending << " with work pending";
  std::cout << "\n";
  return failed ? 1 : 0;
}

}  // namespace parley
