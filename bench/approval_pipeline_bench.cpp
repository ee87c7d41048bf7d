// Approvals per second, by the pipeline stage that decides them: the rules
// alone, an in-process hook (answering at once, or async through its
// handle), an external hook program, and (for reference) a client that
// answers at once. Each approval is a real approval actor running its
// pipeline; the external program is a real subprocess per approval.
//
//   parley_pipeline_bench [--approvals=N] [--in-flight=K] [--runs=R] [--mode=NAME]
//
// Prints one line per mode with the median approvals/s over R runs.

#include <unistd.h>

#include <algorithm>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "actors/approval/approval.hpp"
#include "actors/approval/hooks/approval_hook.hpp"
#include "actors/approval/rules_book.hpp"
#include "actors/runtime/runtime.hpp"
#include "actors/threads/process_reactor.hpp"
#include "bench/instant_decider.hpp"

namespace {

using namespace std::chrono;
namespace fs = std::filesystem;

/// Allows every command at once.
class allow_hook : public parley::hooks::approval_hook {
 public:
  std::string name() const override { return "allow"; }
  parley::hooks::hook_reply review_command(const parley::hooks::review_request&,
                                           const parley::hooks::decision_handle&) override {
    return parley::hooks::hook_reply::allow();
  }
};

/// Answers through the handle (a message back to the approval), as a hook
/// waiting on another system would, only without the wait.
class async_hook : public parley::hooks::approval_hook {
 public:
  std::string name() const override { return "async"; }
  parley::hooks::hook_reply review_command(const parley::hooks::review_request&,
                                           const parley::hooks::decision_handle& h) override {
    h.allow();
    return parley::hooks::hook_reply::later();
  }
};

struct options {
  int approvals = 20000;
  int in_flight = 64;
  int runs = 5;
  std::string mode;  // empty: all
};

/// Decides `n` approvals with at most `k` in flight; returns approvals/s.
double run_once(caf::actor_system& sys, const parley::runtime_services& svc,
                const parley::conversation_actor& client, int n, int k) {
  caf::scoped_actor self{sys};
  parley::approval_ask ask;
  ask.thread_id = "t";
  ask.command.thread_id = "t";
  ask.command.turn_id = "u";
  ask.command.item_id = "call_1";
  ask.raw_command = "touch bench";
  ask.cwd = "/tmp";
  int started = 0, finished = 0, allowed = 0;
  auto start_one = [&] {
    ask.key = svc.telemetry->next_ask_key();
    // What the turn does: plan (rules read once), then spawn the approval.
    auto plan = parley::plan_for(svc, {}, ask, parley::policy_verdict::ask);
    auto a = self->spawn(parley::approval, client, ask, std::move(plan), svc, nullptr,
                         parley::action_record{}, false);
    self->send(a, parley::atom::decide::value);
    ++started;
  };
  auto t0 = steady_clock::now();
  while (started < std::min(k, n)) start_one();
  while (finished < n) {
    self->receive([&](parley::approval_outcome& out) {
      ++finished;
      allowed += out.decision.allows_run() ? 1 : 0;
      if (started < n) start_one();
    });
  }
  auto secs = duration<double>(steady_clock::now() - t0).count();
  if (allowed != n) std::cerr << "warning: " << n - allowed << " approvals were not allowed\n";
  return n / secs;
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) { return a.substr(std::string(name).size()); };
    if (a.rfind("--approvals=", 0) == 0)
      opt.approvals = std::stoi(value("--approvals="));
    else if (a.rfind("--in-flight=", 0) == 0)
      opt.in_flight = std::stoi(value("--in-flight="));
    else if (a.rfind("--runs=", 0) == 0)
      opt.runs = std::stoi(value("--runs="));
    else if (a.rfind("--mode=", 0) == 0)
      opt.mode = value("--mode=");
    else {
      std::cerr << "usage: parley_pipeline_bench [--approvals=N] [--in-flight=K] [--runs=R] "
                   "[--mode=rules|hook|hook-async|external|client]\n";
      return 2;
    }
  }
  auto dir = fs::temp_directory_path() / ("parley-pipeline-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir / "rules");
  std::ofstream(dir / "rules" / "default.rules")
      << "prefix_rule(pattern=[\"touch\"], decision=\"allow\")\n";
  auto hook_program = (dir / "hook.sh").string();
  std::ofstream(hook_program) << "#!/bin/sh\ncat >/dev/null\necho '{\"decision\":\"allow\"}'\n";
  fs::permissions(hook_program, fs::perms::owner_all);

  caf::actor_system_config cfg;
  parley::configure_scheduler(cfg, 0);
  caf::actor_system sys{cfg};
  auto client
      = caf::actor_cast<parley::conversation_actor>(sys.spawn(parley::bench::instant_decider));
  auto reactor = std::make_shared<parley::process_reactor>();

  struct mode {
    std::string name;
    std::function<void(parley::runtime_config&, parley::runtime_services&)> setup;
    int approvals_divisor;  // the external program is ~1000x slower: fewer approvals
  };
  std::vector<mode> modes = {
      {"rules",
       [&](auto&, auto& svc) {
         svc.rules = std::make_shared<parley::rules::rules_book>((dir / "rules").string());
       },
       1},
      {"hook", [](auto& c, auto&) { c.hooks = {std::make_shared<allow_hook>()}; }, 1},
      {"hook-async", [](auto& c, auto&) { c.hooks = {std::make_shared<async_hook>()}; }, 1},
      {"external",
       [&](auto& c, auto&) {
         parley::hooks::external_hook_spec spec;
         spec.name = "allow";
         spec.argv = {hook_program};
         spec.timeout = seconds(30);
         c.external_hooks = {spec};
       },
       20},
      {"client", [](auto&, auto&) {}, 1},
  };
  for (auto& m : modes) {
    if (!opt.mode.empty() && opt.mode != m.name) continue;
    parley::runtime_config c;
    parley::runtime_services svc;
    svc.reactor = reactor;
    svc.telemetry = std::make_shared<parley::runtime_telemetry>();
    m.setup(c, svc);
    svc.config = std::make_shared<const parley::runtime_config>(c);
    int n = std::max(1, opt.approvals / m.approvals_divisor);
    std::vector<double> rates;
    run_once(sys, svc, client, std::min(n, 200), opt.in_flight);  // warm-up
    for (int r = 0; r < opt.runs; ++r)
      rates.push_back(run_once(sys, svc, client, n, opt.in_flight));
    std::sort(rates.begin(), rates.end());
    std::printf(
        "%-11s %8d approvals x %d runs, %d in flight: median %10.0f approvals/s (min %.0f, max "
        "%.0f)\n",
        m.name.c_str(), n, opt.runs, opt.in_flight, rates[rates.size() / 2], rates.front(),
        rates.back());
    std::fflush(stdout);
  }
  reactor->stop();
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
  fs::remove_all(dir);
  return 0;
}
