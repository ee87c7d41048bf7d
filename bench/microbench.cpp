// Microbenchmarks for the protocol hot paths: every client line is parsed and
// every event is serialised once per subscriber.

#include <benchmark/benchmark.h>

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
  const std::string line =
      R"({"id":7,"method":"turn/start","params":{"threadId":"019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80","input":[{"type":"text","text":"run: true","text_elements":[]}]}})";
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
  notification n = parley::protocol::item_completed{"019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80",
                                                    "019a5c3e-7b44-7d02-8e11-90ab12cd34ef", item, 1};
  for (auto _ : state)
    benchmark::DoNotOptimize(encode_notification(method_of(n), params_of(n), 1762500000000));
}
BENCHMARK(serialize_item_completed);

}  // namespace

BENCHMARK_MAIN();
