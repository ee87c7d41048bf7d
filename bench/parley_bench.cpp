// parley-bench: a load generator for any Codex app-server over stdio.
//
//   parley-bench --server 'parley app-server --store memory' --threads 10000 --turns 1
//
// It spawns the server, starts N threads with bounded concurrency, runs M
// turns on each, answers every approval with a chosen mix after an optional
// think time, checks the run (every approval resolved exactly once, every
// turn completed, no ids crossed between threads), and prints and saves the
// figures: throughput, latency percentiles, server peak RSS and CPU time.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <random>
#include <sstream>
#include <algorithm>
#include <string>
#include <unistd.h>
#include <vector>

#include "bench/harness/ledger.hpp"
#include "bench/harness/stamped_reader.hpp"
#include "bench/harness/stats.hpp"
#include "transport/child_process.hpp"

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;
using parley::bench::ledger;
using parley::bench::percentiles;
using parley::bench::summarize;

constexpr const char* usage = R"(usage: parley-bench --server CMD [options]
  --server CMD          the app-server command line (run with /bin/sh -c)
  --threads N           threads to run (default 100)
  --turns M             turns per thread (default 1; 0 = only load idle threads)
  --approvals K         approvals asked per turn (scripted text; default 1)
  --concurrency C       threads in flight at once (default: all)
  --mix SPEC            answers, e.g. accept=3,decline=1,cancel=0,late=0,never=0 (default accept=1)
  --think-ms T          wait T ms before answering (default 0)
  --late-ms L           how late a `late` answer comes (default 2000)
  --text scripted|plain turn text: parley's `run: CMD` lines, or plain text for a model (default scripted)
  --command CMD         the command the turn asks to run (default true)
  --timeout S           give up after S seconds (default 300)
  --json FILE           write every figure as JSON
  --plot FILE.svg       latency CDFs and throughput over time (needs gnuplot)
  --server-log FILE     the server's stderr (default /dev/null)
  --seed S              seed for the answer mix (default 1)
  --quiet               no progress line
)";

struct options {
  std::string server;
  int threads = 100;
  int turns = 1;
  int approvals = 1;
  int concurrency = 0;
  std::map<std::string, int> mix{{"accept", 1}};
  double think_ms = 0;
  double late_ms = 2000;
  bool plain = false;
  std::string command = "true";
  double timeout_s = 300;
  std::string json_path, plot_path, server_log = "/dev/null";
  unsigned seed = 1;
  bool quiet = false;
};

bool parse_options(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& out) {
      auto eq = a.find('=');
      if (eq != std::string::npos) {
        out = a.substr(eq + 1);
        return true;
      }
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    auto name = a.substr(0, a.find('='));
    std::string v;
    if (name == "--quiet") {
      o.quiet = true;
      continue;
    }
    if (name == "--help" || name == "-h" || !value(v)) return false;
    if (name == "--server") o.server = v;
    else if (name == "--threads") o.threads = std::stoi(v);
    else if (name == "--turns") o.turns = std::stoi(v);
    else if (name == "--approvals") o.approvals = std::stoi(v);
    else if (name == "--concurrency") o.concurrency = std::stoi(v);
    else if (name == "--think-ms") o.think_ms = std::stod(v);
    else if (name == "--late-ms") o.late_ms = std::stod(v);
    else if (name == "--text") o.plain = v == "plain";
    else if (name == "--command") o.command = v;
    else if (name == "--timeout") o.timeout_s = std::stod(v);
    else if (name == "--json") o.json_path = v;
    else if (name == "--plot") o.plot_path = v;
    else if (name == "--server-log") o.server_log = v;
    else if (name == "--seed") o.seed = static_cast<unsigned>(std::stoul(v));
    else if (name == "--mix") {
      o.mix.clear();
      size_t pos = 0;
      while (pos < v.size()) {
        auto comma = v.find(',', pos);
        auto part = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        auto eq = part.find('=');
        if (eq == std::string::npos) return false;
        auto kind = part.substr(0, eq);
        if (kind != "accept" && kind != "decline" && kind != "cancel" && kind != "late" && kind != "never")
          return false;
        o.mix[kind] = std::stoi(part.substr(eq + 1));
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    } else {
      return false;
    }
  }
  if (o.concurrency <= 0 || o.concurrency > o.threads) o.concurrency = o.threads;
  return !o.server.empty() && o.threads > 0 && o.turns >= 0;
}

/// /proc figures of the server process.
struct proc_figures {
  long peak_rss_kb = 0;
  double cpu_s = 0;
};

/// A process's own figures (not its children's).
proc_figures read_one(pid_t pid) {
  proc_figures f;
  std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) f.peak_rss_kb = std::stol(line.substr(6));
  std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
  std::string all{std::istreambuf_iterator<char>(stat), std::istreambuf_iterator<char>()};
  auto close = all.rfind(')');
  if (close != std::string::npos) {
    std::istringstream rest{all.substr(close + 2)};
    std::vector<std::string> fields;
    std::string x;
    while (rest >> x) fields.push_back(x);
    // utime and stime are fields 14 and 15 of stat; here indexes 11 and 12.
    if (fields.size() > 12)
      f.cpu_s = static_cast<double>(std::stoll(fields[11]) + std::stoll(fields[12]))
                / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return f;
}

/// The parent pid of `pid`, or 0.
pid_t parent_of(pid_t pid) {
  std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
  std::string all{std::istreambuf_iterator<char>(stat), std::istreambuf_iterator<char>()};
  auto close = all.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest{all.substr(close + 2)};
  std::string state;
  long ppid = 0;
  rest >> state >> ppid;
  return static_cast<pid_t>(ppid);
}

/// The server's figures: the process and every live descendant (a wrapper
/// script, a network namespace, a mock model), summed.
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
    total.cpu_s += f.cpu_s;
  }
  return total;
}

struct approval_record {
  std::string thread;
  double requested_ms = 0;
  double answered_ms = -1;
};

struct thread_run {
  std::string id;
  int turns_done = 0;
  std::string turn;
  double turn_sent_ms = 0;
  double last_answer_ms = -1;
  bool first_approval_seen = false;
};

class bench_run {
 public:
  explicit bench_run(options o)
      : o_(std::move(o)),
        server_({"/bin/sh", "-c", "exec " + o_.server}, o_.server_log),
        rng_(o_.seed),
        start_(clock_type::now()) {}

  int run() {
    send("initialize", json{{"clientInfo", {{"name", "parley-bench"}, {"version", "0.1.0"}}}});
    if (!wait_initialized()) return 2;
    server_.write_line(R"({"method":"initialized"})");
    wall_start_ = now_ms();
    while (started_ < o_.concurrency) start_thread();
    auto deadline = wall_start_ + o_.timeout_s * 1000;
    double last_progress = 0;
    while (finished_ < o_.threads) {
      fire_timers();
      auto wait = next_timer_wait();
      auto line = reader_.next(std::chrono::milliseconds(static_cast<int64_t>(wait)));
      if (line) handle(*line);
      if (reader_.eof()) {
        errors_["server_exited"]++;
        break;
      }
      auto t = now_ms();
      if (t > deadline) {
        errors_["run_timeout"]++;
        break;
      }
      if (!o_.quiet && t - last_progress > 500) {
        last_progress = t;
        std::fprintf(stderr, "\r[parley-bench] threads %d/%d  turns %zu  approvals %zu  %.1fs ",
                     finished_, o_.threads, turn_ms_.size(), ledger_.approvals(),
                     (t - wall_start_) / 1000);
      }
    }
    wall_end_ = now_ms();
    if (!o_.quiet) std::fprintf(stderr, "\n");
    auto figures = read_proc(server_.pid());
    server_.close_stdin();
    while (reader_.next(std::chrono::seconds(30))) {
    }
    auto code = server_.wait();
    if (code != 0) errors_["server_exit_code_" + std::to_string(code)]++;
    ledger_.finish();
    report(figures);
    return ledger_.violations().empty() ? 0 : 1;
  }

 private:
  double now_ms() const {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start_).count();
  }

  int64_t send(const char* method, const json& params) {
    auto id = next_id_++;
    server_.write_line(json{{"id", id}, {"method", method}, {"params", params}}.dump());
    return id;
  }

  bool wait_initialized() {
    while (auto line = reader_.next(std::chrono::seconds(30))) {
      auto j = json::parse(line->text, nullptr, false);
      if (!j.is_discarded() && j.value("id", json()) == 1 && !j.contains("method")) {
        if (j.contains("error")) {
          std::fprintf(stderr, "parley-bench: initialize failed: %s\n", j["error"].dump().c_str());
          return false;
        }
        return true;
      }
    }
    std::fprintf(stderr, "parley-bench: the server did not answer initialize\n");
    return false;
  }

  void start_thread() {
    ++started_;
    auto id = send("thread/start", json{{"approvalPolicy", "on-request"}});
    pending_[id] = {"thread/start", ""};
  }

  std::string turn_text() const {
    if (o_.plain) return "Please run the command `" + o_.command + "` in the current directory.";
    std::string text;
    for (int k = 0; k < o_.approvals; ++k) {
      if (k) text += '\n';
      text += "run: " + o_.command;
    }
    return text;
  }

  void start_turn(thread_run& t) {
    t.turn_sent_ms = now_ms();
    t.first_approval_seen = false;
    auto id = send("turn/start",
                   json{{"threadId", t.id},
                        {"input", json::array({{{"type", "text"}, {"text", turn_text()}, {"text_elements", json::array()}}})}});
    pending_[id] = {"turn/start", t.id};
  }

  std::string pick_decision() {
    int total = 0;
    for (auto& [k, w] : o_.mix) total += w;
    if (total <= 0) return "accept";
    int r = static_cast<int>(rng_() % static_cast<unsigned>(total));
    for (auto& [k, w] : o_.mix) {
      if (r < w) return k;
      r -= w;
    }
    return "accept";
  }

  void answer(const json& id, const std::string& decision) {
    auto key = id.dump();
    auto i = approvals_.find(key);
    if (i != approvals_.end()) {
      i->second.answered_ms = now_ms();
      threads_[i->second.thread].last_answer_ms = i->second.answered_ms;
    }
    server_.write_line(json{{"id", id}, {"result", {{"decision", decision}}}}.dump());
  }

  void fire_timers() {
    auto t = now_ms();
    while (!timers_.empty() && timers_.top().due <= t) {
      auto x = timers_.top();
      timers_.pop();
      answer(x.id, x.decision);
    }
  }

  double next_timer_wait() const {
    if (timers_.empty()) return 500;
    return std::max(0.0, std::min(500.0, timers_.top().due - now_ms()));
  }

  // Latencies end when a line arrived, not when its turn to be handled came.
  void handle(const parley::bench::stamped_line& line) {
    arrived_ms_ = std::chrono::duration<double, std::milli>(line.arrived - start_).count();
    auto m = json::parse(line.text, nullptr, false);
    if (m.is_discarded() || !m.is_object()) {
      errors_["bad_line"]++;
      return;
    }
    auto method = m.value("method", "");
    if (method.empty()) return on_response(m);
    const auto& p = m.contains("params") && m["params"].is_object() ? m["params"] : empty_;
    auto thread = p.value("threadId", "");
    auto turn = p.value("turnId", "");
    if (m.contains("id")) return on_request(m, method, thread, turn);
    if (method == "thread/started" || thread.empty()) return;  // our own thread/start echoes
    if (method == "turn/started" && p.contains("turn")) turn = p["turn"].value("id", "");
    if (method == "turn/completed") return on_turn_completed(thread, p);
    ledger_.event(method, thread, turn);
    if (method == "serverRequest/resolved") {
      auto key = p.value("requestId", json()).dump();
      ledger_.approval_resolved(key, thread);
      auto i = approvals_.find(key);
      if (i != approvals_.end() && i->second.answered_ms >= 0)
        answer_to_resolved_.push_back(arrived_ms_ - i->second.answered_ms);
    } else if (method == "item/completed" && p.contains("item")
               && p["item"].value("type", "") == "commandExecution") {
      auto& t = threads_[thread];
      if (t.last_answer_ms >= 0) answer_to_completed_.push_back(arrived_ms_ - t.last_answer_ms);
      t.last_answer_ms = -1;
    } else if (method == "error") {
      errors_["error_notification"]++;
    }
  }

  void on_request(const json& m, const std::string& method, const std::string& thread,
                  const std::string& turn) {
    if (method != "item/commandExecution/requestApproval" && method != "item/fileChange/requestApproval"
        && method != "execCommandApproval" && method != "applyPatchApproval") {
      errors_["unknown_server_request"]++;
      server_.write_line(json{{"id", m["id"]}, {"error", {{"code", -32601}, {"message", "not supported"}}}}.dump());
      return;
    }
    auto key = m["id"].dump();
    auto& t = threads_[thread];
    ledger_.approval_requested(key, thread, turn);
    approvals_[key] = approval_record{thread, arrived_ms_, -1};
    if (!t.first_approval_seen) {
      t.first_approval_seen = true;
      approval_request_ms_.push_back(arrived_ms_ - t.turn_sent_ms);
    }
    auto decision = pick_decision();
    if (decision == "never") return;
    double delay = o_.think_ms + (decision == "late" ? o_.late_ms : 0);
    if (decision == "late") decision = "accept";
    if (delay <= 0)
      answer(m["id"], decision);
    else
      timers_.push({now_ms() + delay, m["id"], decision});
  }

  void on_response(const json& m) {
    auto id = m.value("id", json());
    if (!id.is_number_integer()) return;
    auto i = pending_.find(id.get<int64_t>());
    if (i == pending_.end()) return;
    auto [method, thread] = i->second;
    pending_.erase(i);
    if (m.contains("error")) {
      errors_["rpc_error:" + method]++;
      if (method == "thread/start") ++finished_;
      if (method == "turn/start") thread_done_or_next(threads_[thread], true);
      return;
    }
    const auto& r = m["result"];
    if (method == "thread/start") {
      auto tid = r["thread"].value("id", "");
      auto& t = threads_[tid];
      t.id = tid;
      ledger_.thread_started(tid);
      if (o_.turns == 0)
        thread_done_or_next(t, true);  // idle threads: memory per loaded thread
      else
        start_turn(t);
    } else if (method == "turn/start") {
      auto& t = threads_[thread];
      auto turn = r["turn"].value("id", "");
      if (turn != t.turn) {
        t.turn = turn;
        ledger_.turn_started(thread, turn);
      }
    }
  }

  void on_turn_completed(const std::string& thread, const json& p) {
    auto& t = threads_[thread];
    auto turn = p.contains("turn") ? p["turn"].value("id", "") : std::string{};
    if (turn != t.turn) {  // turn/completed overtook the turn/start response
      t.turn = turn;
      ledger_.turn_started(thread, turn);
    }
    ledger_.turn_completed(thread, turn);
    auto status = p.contains("turn") ? p["turn"].value("status", "") : std::string{};
    if (status != "completed") errors_["turn_" + status]++;
    turn_ms_.push_back(arrived_ms_ - t.turn_sent_ms);
    completions_.push_back(arrived_ms_ - wall_start_);
    thread_done_or_next(t, false);
  }

  void thread_done_or_next(thread_run& t, bool failed) {
    if (!failed && ++t.turns_done < o_.turns) {
      start_turn(t);
      return;
    }
    ++finished_;
    if (started_ < o_.threads) start_thread();
  }

  json figures_json(const proc_figures& f) const {
    auto pct = [](const std::vector<double>& v) {
      auto s = summarize(v);
      return json{{"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}, {"count", s.count}};
    };
    double wall_s = (wall_end_ - wall_start_) / 1000;
    json mix = json::object();
    for (auto& [k, w] : o_.mix) mix[k] = w;
    return json{{"server", o_.server},
                {"threads", o_.threads},
                {"turns_per_thread", o_.turns},
                {"approvals_per_turn", o_.approvals},
                {"concurrency", o_.concurrency},
                {"mix", mix},
                {"think_ms", o_.think_ms},
                {"wall_s", wall_s},
                {"turns_completed", ledger_.turns_completed()},
                {"turns_per_s", wall_s > 0 ? static_cast<double>(ledger_.turns_completed()) / wall_s : 0},
                {"turn_ms", pct(turn_ms_)},
                {"approval_request_ms", pct(approval_request_ms_)},
                {"answer_to_resolved_ms", pct(answer_to_resolved_)},
                {"answer_to_completed_ms", pct(answer_to_completed_)},
                {"server_peak_rss_kb", f.peak_rss_kb},
                {"server_cpu_s", f.cpu_s},
                {"approvals", ledger_.approvals()},
                {"errors", errors_},
                {"violations", ledger_.violations()}};
  }

  void report(const proc_figures& f) {
    auto j = figures_json(f);
    std::printf("server      %s\n", o_.server.c_str());
    std::printf("load        %d threads x %d turn(s), %d approval(s)/turn, concurrency %d\n",
                o_.threads, o_.turns, o_.approvals, o_.concurrency);
    std::printf("wall        %.3f s   turns %zu   %.0f turns/s   approvals %zu\n",
                j["wall_s"].get<double>(), ledger_.turns_completed(), j["turns_per_s"].get<double>(),
                ledger_.approvals());
    std::printf("server      peak RSS %ld KB   CPU %.2f s\n", f.peak_rss_kb, f.cpu_s);
    std::printf("%-26s %10s %10s %10s %10s\n", "latency (ms)", "p50", "p90", "p99", "max");
    for (auto key : {"turn_ms", "approval_request_ms", "answer_to_resolved_ms", "answer_to_completed_ms"}) {
      auto& s = j[key];
      std::printf("%-26s %10.3f %10.3f %10.3f %10.3f\n", key, s["p50"].get<double>(),
                  s["p90"].get<double>(), s["p99"].get<double>(), s["max"].get<double>());
    }
    std::printf("errors      %s\n", errors_.empty() ? "none" : json(errors_).dump().c_str());
    std::printf("violations  %zu\n", ledger_.violations().size());
    for (size_t i = 0; i < ledger_.violations().size() && i < 10; ++i)
      std::printf("  %s\n", ledger_.violations()[i].c_str());
    if (!o_.json_path.empty()) std::ofstream{o_.json_path} << j.dump(2) << "\n";
    if (!o_.plot_path.empty()) plot();
  }

  void plot() const {
    auto base = o_.plot_path;
    auto cdf = [&](const std::vector<double>& v, const std::string& file) {
      auto s = v;
      std::sort(s.begin(), s.end());
      std::ofstream f{file};
      for (size_t i = 0; i < s.size(); ++i)
        f << s[i] << ' ' << static_cast<double>(i + 1) / static_cast<double>(s.size()) << '\n';
    };
    cdf(turn_ms_, base + ".turn.dat");
    cdf(approval_request_ms_, base + ".request.dat");
    cdf(answer_to_resolved_, base + ".resolved.dat");
    {
      std::map<int, int> per_100ms;
      for (auto t : completions_) per_100ms[static_cast<int>(t / 100)]++;
      std::ofstream f{base + ".rate.dat"};
      for (auto& [bucket, n] : per_100ms) f << bucket / 10.0 << ' ' << n * 10 << '\n';
    }
    std::ofstream g{base + ".gp"};
    g << "set terminal svg size 1000,420 dynamic\nset output '" << base << "'\n"
      << "set multiplot layout 1,2 title 'parley-bench: " << o_.threads << " threads'\n"
      << "set title 'latency CDF'\nset xlabel 'ms'\nset logscale x\nset ylabel 'fraction'\nset key bottom right\n"
      << "plot '" << base << ".turn.dat' w l t 'turn', '" << base << ".request.dat' w l t 'turn/start -> approval', '"
      << base << ".resolved.dat' w l t 'answer -> resolved'\n"
      << "unset logscale x\nset title 'throughput'\nset xlabel 's'\nset ylabel 'turns/s'\n"
      << "plot '" << base << ".rate.dat' w steps t 'completed turns/s'\nunset multiplot\n";
    g.close();
    auto rc = std::system(("gnuplot '" + base + ".gp' 2>/dev/null").c_str());
    if (rc != 0) std::fprintf(stderr, "parley-bench: gnuplot failed (is it installed?); data in %s.*.dat\n", base.c_str());
  }

  struct timer {
    double due;
    json id;
    std::string decision;
    bool operator<(const timer& o) const { return due > o.due; }
  };

  options o_;
  parley::child_process server_;
  parley::bench::stamped_reader reader_{server_.stdout_fd()};  // the only reader of the server's stdout
  std::mt19937 rng_;
  clock_type::time_point start_;
  double wall_start_ = 0, wall_end_ = 0;
  double arrived_ms_ = 0;  // when the line being handled arrived
  int64_t next_id_ = 1;
  int started_ = 0, finished_ = 0;
  std::map<int64_t, std::pair<std::string, std::string>> pending_;  // id -> (method, thread)
  std::map<std::string, thread_run> threads_;
  std::map<std::string, approval_record> approvals_;
  std::priority_queue<timer> timers_;
  ledger ledger_;
  std::map<std::string, int> errors_;
  std::vector<double> turn_ms_, approval_request_ms_, answer_to_resolved_, answer_to_completed_,
      completions_;
  const json empty_ = json::object();
};

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    if (!parse_options(argc, argv, o)) {
      std::fprintf(stderr, "%s", usage);
      return 2;
    }
  } catch (const std::exception&) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  try {
    bench_run run{o};
    return run.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parley-bench: %s\n", e.what());
    return 2;
  }
}
