// parley-bench: a load generator for any Codex app-server, over stdio or
// WebSocket connections.
//
//   parley-bench --server 'parley app-server --store memory' --threads 10000 --turns 1
//
// It spawns the server, starts N threads with bounded concurrency (spread
// over the connections, each its own session), runs M turns on each, answers
// every approval with a chosen mix after an optional think time, checks the
// run (every approval resolved exactly once on every connection asked it,
// every turn completed, no ids crossed between threads), and prints and
// saves the figures: throughput, latency percentiles, server peak RSS, CPU
// time and memory per idle connection.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <queue>
#include <random>
#include <string>
#include <sys/resource.h>
#include <vector>

#include "bench/harness/ledger.hpp"
#include "bench/harness/options.hpp"
#include "bench/harness/plot.hpp"
#include "bench/harness/proc_figures.hpp"
#include "bench/harness/stats.hpp"
#include "bench/harness/stdio_link.hpp"
#include "bench/harness/ws_link.hpp"
#include "transport/child_process.hpp"

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;
using namespace parley::bench;

/// An id that is unique only on its connection (request ids, JSON-dumped).
using conn_key = std::pair<int, std::string>;

struct approval_record {
  std::string thread;
  double requested_ms = 0;
  double answered_ms = -1;
};

/// One connection's copy of an approval, waiting for the other copies.
struct approval_copy {
  int connection;
  json id;
};

struct thread_run {
  std::string id;
  int connection = 0;   // the one that started it and runs its turns
  int subscribers = 1;  // connections asked its approvals
  int joins_pending = 0;
  int turns_done = 0;
  std::string turn;
  double turn_sent_ms = 0;
  double last_answer_ms = -1;
  int answer_connection = -1;
  bool first_approval_seen = false;
};

struct pending_call {
  std::string method, thread;
};

class bench_run {
 public:
  explicit bench_run(options o)
      : o_(std::move(o)),
        server_({"/bin/sh", "-c", "exec " + o_.server}, o_.server_log),
        rng_(o_.seed),
        start_(clock_type::now()) {}

  int run() {
    if (!open_sessions()) return 2;
    if (o_.idle_connections > 0 && !measure_idle_connections()) return 2;
    wall_start_ = now_ms();
    while (started_ < o_.concurrency) start_thread();
    auto deadline = wall_start_ + o_.timeout_s * 1000;
    double last_progress = 0;
    while (finished_ < o_.threads || joined_turns_open_ > 0) {
      fire_timers();
      auto wait = next_timer_wait();
      auto message = link_->next(std::chrono::milliseconds(static_cast<int64_t>(wait)));
      if (message) handle(*message);
      if (link_->ended()) {
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
    harness_cpu_s_ = own_cpu_s();
    if (!o_.quiet) std::fprintf(stderr, "\n");
    auto figures = read_proc(server_.pid());
    auto code = stop_server();
    if (code != 0) errors_["server_exit_code_" + std::to_string(code)]++;
    ledger_.finish();
    report(figures);
    return ledger_.violations().empty() ? 0 : 1;
  }

 private:
  bool stdio() const { return o_.connect.what == endpoint::kind::stdio; }

  /// The harness's own CPU time, all its threads: it shares the cores with the server.
  static double own_cpu_s() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return s(u.ru_utime) + s(u.ru_stime);
  }

  double now_ms() const {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start_).count();
  }

  /// The run's sessions, initialized: stdio, or K WebSocket connections once
  /// the server listens (it may take a while to start).
  bool open_sessions() {
    if (stdio()) {
      link_ = std::make_unique<stdio_link>(server_);
    } else {
      auto ws = std::make_unique<ws_link>(o_.connect);
      try {
        ws->open(o_.connections, clock_type::now() + std::chrono::seconds(10));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "parley-bench: %s\n", e.what());
        return false;
      }
      ws_ = ws.get();
      link_ = std::move(ws);
    }
    return initialize(0, o_.connections);
  }

  /// Sends initialize on connections [first, first+count), waits for every
  /// reply, then sends initialized on each.
  bool initialize(int first, int count) {
    next_id_.resize(static_cast<size_t>(first + count), 1);
    for (int c = first; c < first + count; ++c)
      send(c, "initialize", json{{"clientInfo", {{"name", "parley-bench"}, {"version", "0.1.0"}}}});
    initialized_ = 0;
    auto deadline = clock_type::now() + std::chrono::seconds(30);
    while (initialized_ < count && clock_type::now() < deadline && !link_->ended()) {
      if (auto m = link_->next(std::chrono::milliseconds(100))) handle(*m);
      if (!initialize_error_.empty()) {
        std::fprintf(stderr, "parley-bench: initialize failed: %s\n", initialize_error_.c_str());
        return false;
      }
    }
    if (initialized_ < count) {
      std::fprintf(stderr, "parley-bench: the server did not answer initialize\n");
      return false;
    }
    for (int c = first; c < first + count; ++c) link_->send(c, R"({"method":"initialized"})");
    return true;
  }

  /// The server's resident memory before and after N more connections that
  /// only initialize, each time after a short settle.
  bool measure_idle_connections() {
    settle(std::chrono::milliseconds(300));
    auto before = read_proc(server_.pid()).rss_kb;
    try {
      auto first = ws_->open(o_.idle_connections, clock_type::now() + std::chrono::seconds(10));
      if (!initialize(first, o_.idle_connections)) return false;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "parley-bench: %s\n", e.what());
      return false;
    }
    settle(std::chrono::milliseconds(500));
    idle_rss_delta_kb_ = read_proc(server_.pid()).rss_kb - before;
    return true;
  }

  void settle(std::chrono::milliseconds how_long) {
    auto until = clock_type::now() + how_long;
    while (clock_type::now() < until)
      if (auto m = link_->next(std::chrono::milliseconds(20))) handle(*m);
  }

  /// Ends the sessions and the server: stdin closed (it ends by itself), or
  /// every WebSocket closed and then SIGTERM (a listener runs until told).
  int stop_server() {
    link_->close(std::chrono::seconds(stdio() ? 30 : 5));
    if (!stdio()) server_.signal(SIGTERM);
    return server_.wait();
  }

  int64_t send(int connection, const char* method, const json& params, std::string thread = {}) {
    auto id = next_id_[static_cast<size_t>(connection)]++;
    link_->send(connection, json{{"id", id}, {"method", method}, {"params", params}}.dump());
    pending_[{connection, id}] = {method, std::move(thread)};
    return id;
  }

  void start_thread() {
    int connection = started_ % o_.connections;
    ++started_;
    // on-request asks only to leave the sandbox (every turn line asks to);
    // with full access there is none to leave, and untrusted still asks.
    json params{{"approvalPolicy",
                 o_.sandbox == "danger-full-access" ? "untrusted" : "on-request"}};
    if (!o_.sandbox.empty()) params["sandbox"] = o_.sandbox;
    send(connection, "thread/start", std::move(params));
  }

  std::string turn_text() const {
    if (!o_.prompt.empty()) return o_.prompt;
    if (o_.plain) return "Please run the command `" + o_.command + "` in the current directory.";
    std::string text;
    for (int k = 0; k < o_.approvals; ++k) {
      if (k) text += '\n';
      // on-request runs a confined command unasked and asks for an escalation.
      text += (o_.confined ? "run: " : "run[escalate]: ") + o_.command;
    }
    return text;
  }

  void start_turn(thread_run& t) {
    t.turn_sent_ms = now_ms();
    t.first_approval_seen = false;
    send(t.connection, "turn/start",
         json{{"threadId", t.id},
              {"input", json::array({{{"type", "text"}, {"text", turn_text()}, {"text_elements", json::array()}}})}},
         t.id);
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

  void answer(int connection, const json& id, const std::string& decision) {
    auto i = approvals_.find({connection, id.dump()});
    if (i != approvals_.end()) {
      i->second.answered_ms = now_ms();
      auto& t = threads_[i->second.thread];
      t.last_answer_ms = i->second.answered_ms;
      t.answer_connection = connection;
    }
    link_->send(connection, json{{"id", id}, {"result", {{"decision", decision}}}}.dump());
  }

  void fire_timers() {
    auto t = now_ms();
    while (!timers_.empty() && timers_.top().due <= t) {
      auto x = timers_.top();
      timers_.pop();
      answer(x.connection, x.id, x.decision);
    }
  }

  double next_timer_wait() const {
    if (timers_.empty()) return 500;
    return std::max(0.0, std::min(500.0, timers_.top().due - now_ms()));
  }

  bool owner(const std::string& thread, int connection) const {
    auto i = threads_.find(thread);
    return i != threads_.end() && i->second.connection == connection;
  }

  // Latencies end when a message arrived, not when its turn to be handled came.
  void handle(const stamped_message& message) {
    arrived_ms_ = std::chrono::duration<double, std::milli>(message.arrived - start_).count();
    int conn = message.connection;
    auto m = json::parse(message.text, nullptr, false);
    if (m.is_discarded() || !m.is_object()) {
      errors_["bad_line"]++;
      return;
    }
    auto method = m.value("method", "");
    if (method.empty()) return on_response(m, conn);
    const auto& p = m.contains("params") && m["params"].is_object() ? m["params"] : empty_;
    auto thread = p.value("threadId", "");
    auto turn = p.value("turnId", "");
    if (m.contains("id")) return on_request(m, method, thread, turn, conn);
    if (method == "thread/started" || thread.empty()) return;  // our own thread/start echoes
    if (method == "turn/started" && p.contains("turn")) {
      turn = p["turn"].value("id", "");
      if (!owner(thread, conn)) ledger_.turn_started(thread, turn, conn);  // a joined connection learns it here
    }
    if (method == "turn/completed") return on_turn_completed(thread, p, conn);
    ledger_.event(method, thread, turn, conn);
    if (method == "serverRequest/resolved") {
      auto key = p.value("requestId", json()).dump();
      ledger_.approval_resolved(key, thread, conn);
      auto i = approvals_.find({conn, key});
      if (i != approvals_.end() && i->second.answered_ms >= 0)
        answer_to_resolved_.push_back(arrived_ms_ - i->second.answered_ms);
    } else if (method == "item/started" && p.contains("item")
               && p["item"].value("type", "") == "commandExecution" && owner(thread, conn)) {
      command_started_[thread + "/" + p["item"].value("id", "")] = arrived_ms_;
    } else if (method == "item/completed" && p.contains("item")
               && p["item"].value("type", "") == "commandExecution") {
      ledger_.item_completed(thread, p["item"].value("id", ""), conn);
      // A command's own time, asked or not: its item's start to its end
      // (with an approval in between when one was asked).
      if (auto s = command_started_.find(thread + "/" + p["item"].value("id", ""));
          s != command_started_.end()) {
        command_ms_.push_back(arrived_ms_ - s->second);
        command_started_.erase(s);
      }
      auto& t = threads_[thread];
      if (conn != t.answer_connection) return;
      if (t.last_answer_ms >= 0) answer_to_completed_.push_back(arrived_ms_ - t.last_answer_ms);
      t.last_answer_ms = -1;
    } else if (method == "item/agentMessage/delta") {
      ++agent_message_deltas_;
    } else if (method == "error") {
      errors_["error_notification"]++;
    }
  }

  void on_request(const json& m, const std::string& method, const std::string& thread,
                  const std::string& turn, int conn) {
    if (method != "item/commandExecution/requestApproval" && method != "item/fileChange/requestApproval"
        && method != "execCommandApproval" && method != "applyPatchApproval") {
      errors_["unknown_server_request"]++;
      link_->send(conn, json{{"id", m["id"]}, {"error", {{"code", -32601}, {"message", "not supported"}}}}.dump());
      return;
    }
    auto key = m["id"].dump();
    auto item = m["params"].value("itemId", "");
    auto& t = threads_[thread];
    ledger_.approval_requested(key, thread, turn, conn, item);
    approvals_[{conn, key}] = approval_record{thread, arrived_ms_, -1};
    if (!t.first_approval_seen) {
      t.first_approval_seen = true;
      approval_request_ms_.push_back(arrived_ms_ - t.turn_sent_ms);
    }
    // Every subscribed connection is asked; answer once all copies are here.
    auto group = thread + "/" + (item.empty() ? std::to_string(conn) + ":" + key : item);
    auto& copies = asks_[group];
    copies.push_back({conn, m["id"]});
    if (copies.size() < (item.empty() ? 1u : static_cast<size_t>(t.subscribers))) return;
    auto chosen = copies.size() > 1 ? copies[rng_() % copies.size()] : copies.front();
    asks_.erase(group);
    auto decision = pick_decision();
    if (decision == "never") return;
    double delay = o_.think_ms + (decision == "late" ? o_.late_ms : 0);
    if (decision == "late") decision = "accept";
    if (delay <= 0)
      answer(chosen.connection, chosen.id, decision);
    else
      timers_.push({now_ms() + delay, chosen.connection, chosen.id, decision});
  }

  void on_response(const json& m, int conn) {
    auto id = m.value("id", json());
    if (!id.is_number_integer()) return;
    auto i = pending_.find({conn, id.get<int64_t>()});
    if (i == pending_.end()) return;
    auto [method, thread] = i->second;
    pending_.erase(i);
    if (method == "initialize") {
      if (m.contains("error")) initialize_error_ = m["error"].dump();
      ++initialized_;
      return;
    }
    if (m.contains("error")) return on_error(method, thread);
    const auto& r = m["result"];
    if (method == "thread/start") {
      auto tid = r["thread"].value("id", "");
      auto& t = threads_[tid];
      t.id = tid;
      t.connection = conn;
      ledger_.thread_started(tid, conn);
      if (o_.turns == 0) return thread_done_or_next(t, true);  // idle threads: memory per loaded thread
      for (int k = 1; k < o_.clients_per_thread; ++k, ++t.joins_pending)
        send((conn + k) % o_.connections, "thread/resume", json{{"threadId", tid}}, tid);
      if (t.joins_pending == 0) start_turn(t);
    } else if (method == "thread/resume") {
      auto& t = threads_[thread];
      ledger_.thread_joined(thread, conn);
      ++t.subscribers;
      if (--t.joins_pending == 0) start_turn(t);
    } else if (method == "turn/start") {
      auto& t = threads_[thread];
      auto turn = r["turn"].value("id", "");
      if (turn != t.turn) {
        t.turn = turn;
        ledger_.turn_started(thread, turn, conn);
      }
    }
  }

  void on_error(const std::string& method, const std::string& thread) {
    errors_["rpc_error:" + method]++;
    if (method == "thread/start") ++finished_;
    if (method == "turn/start") thread_done_or_next(threads_[thread], true);
    if (method == "thread/resume" && --threads_[thread].joins_pending == 0) start_turn(threads_[thread]);
  }

  void on_turn_completed(const std::string& thread, const json& p, int conn) {
    auto turn = p.contains("turn") ? p["turn"].value("id", "") : std::string{};
    if (!owner(thread, conn)) {  // a joined copy
      --joined_turns_open_;
      return ledger_.turn_completed(thread, turn, conn);
    }
    auto& t = threads_[thread];
    joined_turns_open_ += t.subscribers - 1;
    if (turn != t.turn) {  // turn/completed overtook the turn/start response
      t.turn = turn;
      ledger_.turn_started(thread, turn, conn);
    }
    ledger_.turn_completed(thread, turn, conn);
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
    json j{{"server", o_.server},
           {"transport", o_.connect.transport()},
           {"connections", o_.connections},
           {"clients_per_thread", o_.clients_per_thread},
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
           {"command_ms", pct(command_ms_)},
           {"confined", o_.confined},
           {"server_peak_rss_kb", f.peak_rss_kb},
           {"server_cpu_s", f.cpu_s},
           {"harness_cpu_s", harness_cpu_s_},
           {"agent_message_deltas", agent_message_deltas_},
           {"deltas_per_s", wall_s > 0 ? static_cast<double>(agent_message_deltas_) / wall_s : 0},
           {"approvals", ledger_.approvals()},
           {"approval_requests", ledger_.approval_requests()},
           {"errors", errors_},
           {"violations", ledger_.violations()}};
    if (o_.idle_connections > 0) {
      j["idle_connections"] = o_.idle_connections;
      j["idle_rss_delta_kb"] = idle_rss_delta_kb_;
      j["memory_per_idle_connection_kb"] = static_cast<double>(idle_rss_delta_kb_) / o_.idle_connections;
    }
    return j;
  }

  void report(const proc_figures& f) {
    auto j = figures_json(f);
    std::printf("server      %s\n", o_.server.c_str());
    std::printf("transport   %s, %d connection(s), %d client(s) per thread\n",
                o_.connect.transport().c_str(), o_.connections, o_.clients_per_thread);
    std::printf("load        %d threads x %d turn(s), %d approval(s)/turn, concurrency %d\n",
                o_.threads, o_.turns, o_.approvals, o_.concurrency);
    std::printf("wall        %.3f s   turns %zu   %.0f turns/s   approvals %zu (%zu asked)\n",
                j["wall_s"].get<double>(), ledger_.turns_completed(), j["turns_per_s"].get<double>(),
                ledger_.approvals(), ledger_.approval_requests());
    if (agent_message_deltas_ > 0)
      std::printf("deltas      %zu item/agentMessage/delta   %.0f deltas/s\n", agent_message_deltas_,
                  j["deltas_per_s"].get<double>());
    std::printf("server      peak RSS %ld KB   CPU %.2f s   (harness CPU %.2f s)\n", f.peak_rss_kb, f.cpu_s,
                harness_cpu_s_);
    if (o_.idle_connections > 0)
      std::printf("idle        %d connections: RSS +%ld KB, memory per idle connection %.1f KB\n",
                  o_.idle_connections, idle_rss_delta_kb_, j["memory_per_idle_connection_kb"].get<double>());
    std::printf("%-26s %10s %10s %10s %10s\n", "latency (ms)", "p50", "p90", "p99", "max");
    for (auto key : {"turn_ms", "approval_request_ms", "answer_to_resolved_ms", "answer_to_completed_ms",
                     "command_ms"}) {
      auto& s = j[key];
      std::printf("%-26s %10.3f %10.3f %10.3f %10.3f\n", key, s["p50"].get<double>(),
                  s["p90"].get<double>(), s["p99"].get<double>(), s["max"].get<double>());
    }
    std::printf("errors      %s\n", errors_.empty() ? "none" : json(errors_).dump().c_str());
    std::printf("violations  %zu\n", ledger_.violations().size());
    for (size_t i = 0; i < ledger_.violations().size() && i < 10; ++i)
      std::printf("  %s\n", ledger_.violations()[i].c_str());
    if (!o_.json_path.empty()) std::ofstream{o_.json_path} << j.dump(2) << "\n";
    if (!o_.plot_path.empty())
      plot({o_.threads, turn_ms_, approval_request_ms_, answer_to_resolved_, completions_}, o_.plot_path);
  }

  struct timer {
    double due;
    int connection;
    json id;
    std::string decision;
    bool operator<(const timer& o) const { return due > o.due; }
  };

  options o_;
  parley::child_process server_;
  std::unique_ptr<server_link> link_;
  ws_link* ws_ = nullptr;  // link_, when it is WebSocket
  std::mt19937 rng_;
  clock_type::time_point start_;
  double wall_start_ = 0, wall_end_ = 0;
  double arrived_ms_ = 0;  // when the message being handled arrived
  std::vector<int64_t> next_id_;  // per connection
  int initialized_ = 0;
  std::string initialize_error_;
  long idle_rss_delta_kb_ = 0;
  double harness_cpu_s_ = 0;
  int started_ = 0, finished_ = 0;
  size_t agent_message_deltas_ = 0;  // item/agentMessage/delta notifications, every connection
  // Turns completed on their owner whose copies are still to come on joined
  // connections (may dip below 0: either may come first). The run ends when
  // they are in too, so the ledger sees every copy.
  int joined_turns_open_ = 0;
  std::map<std::pair<int, int64_t>, pending_call> pending_;  // (connection, id)
  std::map<std::string, thread_run> threads_;
  std::map<conn_key, approval_record> approvals_;
  std::map<std::string, std::vector<approval_copy>> asks_;  // thread/item -> copies so far
  std::priority_queue<timer> timers_;
  ledger ledger_;
  std::map<std::string, int> errors_;
  std::unordered_map<std::string, double> command_started_;  // "thread/item" -> arrived ms
  std::vector<double> command_ms_;
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
