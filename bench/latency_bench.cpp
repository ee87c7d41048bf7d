// Answer -> serverRequest/resolved inside the server, in-process: the
// client's reply line is handed to the connection actor the way the stdin
// reader hands it over, and the clock stops when the resolved notification
// reaches the output writer. Measured with 10,000 approvals pending.
//
//   parley_latency_bench [--approvals=N]

#include <algorithm>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "actors/runtime/runtime.hpp"
#include "bench/harness/stats.hpp"
#include "transport/connection.hpp"

namespace {

using namespace parley;
using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

struct shared_log {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::string> threads;
  std::vector<json> requests;
  size_t resolved = 0;
  clock_type::time_point last_resolved;
};

/// Stands in for the stdout writer: watches the lines instead of writing them.
line_writer_actor::behavior_type watcher(line_writer_actor::pointer, std::shared_ptr<shared_log> log) {
  auto watch = [log](std::string& line) {
        auto now = clock_type::now();
        if (line.find("serverRequest/resolved") != std::string::npos) {
          std::lock_guard<std::mutex> lock{log->mtx};
          ++log->resolved;
          log->last_resolved = now;
          log->cv.notify_all();
          return;
        }
        bool request = line.find("requestApproval") != std::string::npos;
        bool started = line.find("\"thread\":{") != std::string::npos && line.find("\"result\"") != std::string::npos;
        if (!request && !started) return;
        auto j = json::parse(line);
        std::lock_guard<std::mutex> lock{log->mtx};
        if (request)
          log->requests.push_back(j["id"]);
        else
          log->threads.push_back(j["result"]["thread"]["id"]);
        log->cv.notify_all();
  };
  return {
      watch,
      [watch](std::string& line, std::shared_ptr<const void>&) mutable { watch(line); },
      [](atom::flush) {},
      [](atom::close) { return atom::ok::value; },
  };
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 10000;
  for (int i = 1; i < argc; ++i)
    if (std::string{argv[i]}.rfind("--approvals=", 0) == 0) n = std::stoul(std::string{argv[i]}.substr(12));
  runtime_config cfg;
  cfg.store = runtime_config::store_kind::memory;
  runtime rt{cfg};
  auto log = std::make_shared<shared_log>();
  auto out = rt.system().spawn(watcher, log);
  connection_options options;
  options.config = rt.shared_config();
  options.telemetry = rt.telemetry();
  options.shutdown_on_close = false;
  auto conn = rt.system().spawn(connection, rt.threads(), out, options);
  auto line = [&](const json& j) { caf::anon_send(conn, atom::line::value, j.dump()); };
  auto wait = [&](auto pred) {
    std::unique_lock<std::mutex> lock{log->mtx};
    log->cv.wait(lock, [&] { return pred(); });
  };
  line(json{{"id", 0}, {"method", "initialize"}, {"params", {{"clientInfo", {{"name", "latency"}, {"version", "1"}}}}}});
  for (size_t i = 0; i < n; ++i)
    line(json{{"id", 1 + i}, {"method", "thread/start"}, {"params", {{"approvalPolicy", "on-request"}}}});
  wait([&] { return log->threads.size() == n; });
  for (size_t i = 0; i < n; ++i)
    line(json{{"id", 1 + n + i},
              {"method", "turn/start"},
              {"params", {{"threadId", log->threads[i]}, {"input", json::array({{{"type", "text"}, {"text", "run[escalate]: true"}}})}}}});
  wait([&] { return log->requests.size() == n; });
  std::fprintf(stderr, "%zu approvals pending\n", n);

  auto ids = log->requests;
  std::shuffle(ids.begin(), ids.end(), std::mt19937{7});
  std::vector<double> all, busiest;  // busiest: while >= 90% are still pending
  for (size_t k = 0; k < ids.size(); ++k) {
    auto reply = json{{"id", ids[k]}, {"result", {{"decision", "decline"}}}}.dump();
    auto t0 = clock_type::now();
    caf::anon_send(conn, atom::line::value, std::move(reply));
    wait([&] { return log->resolved == k + 1; });
    double us = std::chrono::duration<double, std::micro>(log->last_resolved - t0).count();
    all.push_back(us);
    if (k < n / 10) busiest.push_back(us);
  }
  auto s = bench::summarize(all);
  auto b = bench::summarize(busiest);
  std::printf("answer -> serverRequest/resolved, in-process, %zu approvals pending at the start\n", n);
  std::printf("  all %zu answers:        p50 %.1f us  p90 %.1f us  p99 %.1f us  max %.1f us\n", s.count,
              s.p50, s.p90, s.p99, s.max);
  std::printf("  first 10%% (>= %zu pending): p50 %.1f us  p99 %.1f us\n", n - n / 10, b.p50, b.p99);
  caf::anon_send(conn, atom::eof::value);
  return 0;
}
