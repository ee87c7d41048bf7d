// Microbenchmarks for the protocol hot paths: every client line is parsed and
// every event is serialised once per subscriber.

#include <benchmark/benchmark.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/approval/approval.hpp"
#include "actors/embed/in_process_client.hpp"
#include "actors/runtime/runtime.hpp"
#include "bench/instant_decider.hpp"
#include "protocol/approvals.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/notifications.hpp"

namespace {

using namespace parley::protocol;

void parse_approval_reply(benchmark::State& state) {
  const std::string line = R"({"id":42,"result":{"decision":"accept"}})";
  for (auto _ : state) {
    auto m = parse_message(line);
    auto& msg = std::get<incoming_message>(m);
    benchmark::DoNotOptimize(decode_approval_result(msg.result));
  }
}
BENCHMARK(parse_approval_reply);

void parse_turn_start(benchmark::State& state) {
  const std::string line
      = R"({"id":7,"method":"turn/start","params":{"threadId":"019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80","input":[{"type":"text","text":"run: true","text_elements":[]}]}})";
  for (auto _ : state) benchmark::DoNotOptimize(parse_message(line));
}
BENCHMARK(parse_turn_start);

void serialize_item_completed(benchmark::State& state) {
  command_execution_item item;
  item.id = "call_0123456789abcdef01234567";
  item.command = "/bin/sh -c 'true'";
  item.cwd = "/tmp";
  item.status = item_status::completed;
  item.command_actions = {command_action{command_action::kind::unknown, "true", {}, {}, {}}};
  item.aggregated_output = "";
  item.exit_code = 0;
  item.duration_ms = 1;
  notification n = parley::protocol::item_completed{
      "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80", "019a5c3e-7b44-7d02-8e11-90ab12cd34ef", item, 1};
  for (auto _ : state)
    benchmark::DoNotOptimize(encode_notification(method_of(n), params_of(n), 1762500000000));
}
BENCHMARK(serialize_item_completed);

void parse_and_decode_turn_start(benchmark::State& state) {
  // What the connection does with a turn/start line before dispatching it.
  const std::string line
      = R"({"id":7,"method":"turn/start","params":{"threadId":"019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80","input":[{"type":"text","text":"run: true","text_elements":[]}]}})";
  for (auto _ : state) {
    auto m = parse_message(line);
    auto& msg = std::get<incoming_message>(m);
    benchmark::DoNotOptimize(decode<turn_start_params>(msg.params));
  }
}
BENCHMARK(parse_and_decode_turn_start);

// -- actors ----------------------------------------------------------------------

/// One actor system for the actor benchmarks, made and shut down by main():
/// a static actor_system torn down during exit corrupts the heap.
caf::actor_system* bench_sys = nullptr;

caf::actor_system& bench_system() {
  return *bench_sys;
}

caf::behavior echo(caf::event_based_actor*, int) {
  return {[](parley::atom::decide) { return parley::atom::ok::value; }};
}

/// The baseline: one CAF request/response between two local actors.
void raw_caf_request_response(benchmark::State& state) {
  auto& sys = bench_system();
  auto target = sys.spawn(echo, 0);
  caf::scoped_actor self{sys};
  for (auto _ : state)
    self->request(target, std::chrono::seconds(5), parley::atom::decide::value)
        .receive([](parley::atom::ok) {}, [&](caf::error&) { state.SkipWithError("failed"); });
  self->send_exit(target, caf::exit_reason::kill);
}
BENCHMARK(raw_caf_request_response);

/// One approval from the turn's point of view: spawn the approval actor, ask
/// it to decide, it asks its conversation (here a stand-in that accepts at
/// once), the outcome comes back, the actor quits.
void approval_round_trip(benchmark::State& state) {
  auto& sys = bench_system();
  auto decider
      = caf::actor_cast<parley::conversation_actor>(sys.spawn(parley::bench::instant_decider));
  caf::scoped_actor self{sys};
  parley::approval_ask ask;
  ask.thread_id = "t";
  ask.command.thread_id = "t";
  ask.command.turn_id = "u";
  ask.command.item_id = "call_1";
  parley::runtime_services svc;
  auto cfg = std::make_shared<parley::runtime_config>();
  cfg->approval_timeout = std::chrono::milliseconds(5000);
  svc.config = cfg;
  svc.telemetry = std::make_shared<parley::runtime_telemetry>();
  for (auto _ : state) {
    ask.key = svc.telemetry->next_ask_key();
    auto a = sys.spawn(parley::approval, decider, ask, parley::approval_plan{}, svc, nullptr,
                       parley::action_record{}, false);
    self->request(a, std::chrono::seconds(5), parley::atom::decide::value)
        .receive([](parley::approval_outcome&) {},
                 [&](caf::error&) { state.SkipWithError("failed"); });
  }
  self->send_exit(decider, caf::exit_reason::kill);
}
BENCHMARK(approval_round_trip);

/// thread/start through the in-process connection: spawn a conversation,
/// subscribe, describe it, announce it.
class quiet_host : public parley::in_process_client::handler {
 public:
  void on_notification(const notification&) override {}
  void on_approval(const parley::approval_ask&, parley::approval_reply r) override {
    r(approval_decision::accept());
  }
};

void spawn_conversation(benchmark::State& state) {
  parley::runtime_config cfg;
  cfg.store = parley::runtime_config::store_kind::memory;
  parley::runtime rt{cfg};
  parley::in_process_client client{rt, std::make_shared<quiet_host>()};
  for (auto _ : state) benchmark::DoNotOptimize(client.start_thread({}));
}
BENCHMARK(spawn_conversation)->Iterations(5000);

}  // namespace

int main(int argc, char** argv) {
  caf::actor_system_config cfg;
  parley::configure_scheduler(cfg, 0);
  auto sys = std::make_unique<caf::actor_system>(cfg);
  bench_sys = sys.get();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  bench_sys = nullptr;
  sys.reset();  // every actor of the benchmarks has quit by now
  return 0;
}
