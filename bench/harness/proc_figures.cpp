#include "bench/harness/proc_figures.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace parley::bench {

namespace {

/// The fields of /proc/PID/stat after the command name (state first).
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
  std::string all{std::istreambuf_iterator<char>(stat), std::istreambuf_iterator<char>()};
  auto close = all.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest{all.substr(close + 2)};
  std::string x;
  while (rest >> x) fields.push_back(x);
  return fields;
}

/// A process's own figures (not its children's).
proc_figures read_one(pid_t pid) {
  proc_figures f;
  std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) f.peak_rss_kb = std::stol(line.substr(6));
    if (line.rfind("VmRSS:", 0) == 0) f.rss_kb = std::stol(line.substr(6));
  }
  auto fields = stat_fields(pid);
  // utime and stime are fields 14 and 15 of stat; here indexes 11 and 12.
  if (fields.size() > 12)
    f.cpu_s = static_cast<double>(std::stoll(fields[11]) + std::stoll(fields[12]))
              / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return f;
}

/// The parent pid of `pid`, or 0.
pid_t parent_of(pid_t pid) {
  auto fields = stat_fields(pid);
  return fields.size() > 1 ? static_cast<pid_t>(std::stol(fields[1])) : 0;
}

}  // namespace

proc_figures read_proc(pid_t root) {
  std::vector<pid_t> tree{root};
  std::map<pid_t, pid_t> parents;
  for (auto& entry : std::filesystem::directory_iterator("/proc")) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto pid = static_cast<pid_t>(std::stol(name));
    parents[pid] = parent_of(pid);
  }
  for (size_t i = 0; i < tree.size(); ++i)
    for (auto& [pid, ppid] : parents)
      if (ppid == tree[i]) tree.push_back(pid);
  proc_figures total;
  for (auto pid : tree) {
    auto f = read_one(pid);
    total.peak_rss_kb += f.peak_rss_kb;
    total.rss_kb += f.rss_kb;
    total.cpu_s += f.cpu_s;
  }
  return total;
}

}  // namespace parley::bench
