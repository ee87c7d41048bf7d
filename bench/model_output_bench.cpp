// What it costs to make a big MCP result ready for the model (Google
// Benchmark): a 5 MB text result cut to the model's budget, and a
// 4000x3000 PNG decoded, scaled down to 1824x1368 and encoded again.
// bench/README.md has the figures.

#include <benchmark/benchmark.h>

#include <string>

#include "protocol/base64.hpp"
#include "protocol/mcp_tool_calls.hpp"
#include "protocol/output_truncation.hpp"
#include "protocol/prompt_image.hpp"
#include "protocol/stb_codecs.hpp"

namespace {

using namespace parley::protocol;

const auto budget = tool_output_policy("mock-model").scaled(1.2);

std::string five_mb_text() {
  std::string s;
  s.reserve(5u << 20);
  while (s.size() < (5u << 20)) s += "line " + std::to_string(s.size()) + ": some tool output\n";
  return s;
}

/// A 4000x3000 RGB picture with detail (a gradient crossed by a pattern), as PNG.
const std::string& big_png() {
  static const std::string png = [] {
    const int w = 4000, h = 3000;
    std::string px(static_cast<size_t>(w) * h * 3, '\0');
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        auto* p = &px[(static_cast<size_t>(y) * w + static_cast<size_t>(x)) * 3];
        p[0] = static_cast<char>(x * 255 / w);
        p[1] = static_cast<char>(y * 255 / h);
        p[2] = static_cast<char>((x ^ y) & 0xff);
      }
    return stb::encode_png(px, w, h, 3);
  }();
  return png;
}

void truncate_5mb_text(benchmark::State& state) {
  auto text = five_mb_text();
  for (auto _ : state) benchmark::DoNotOptimize(truncate_text(text, budget));
}
BENCHMARK(truncate_5mb_text)->Unit(benchmark::kMillisecond);

/// The whole way of a 5 MB text result: the server's JSON read, the model's
/// parts made, cut to the budget, and the output serialised.
void mcp_5mb_result_to_model(benchmark::State& state) {
  json result = {{"content", json::array({{{"type", "text"}, {"text", five_mb_text()}}})}};
  auto text = result.dump();
  for (auto _ : state) {
    auto out = mcp_output_of_result_text(text, 0.5);
    benchmark::DoNotOptimize(truncate_output_parts(out.content_items, budget).dump());
  }
}
BENCHMARK(mcp_5mb_result_to_model)->Unit(benchmark::kMillisecond);

void prepare_4000x3000_png(benchmark::State& state) {
  const auto& png = big_png();
  for (auto _ : state) {
    auto out = prepare_prompt_image(png, high_detail_limits);
    if (out.width != 1824) state.SkipWithError("not scaled as Codex scales it");
    benchmark::DoNotOptimize(out.bytes);
  }
  state.counters["png_bytes"] = static_cast<double>(png.size());
}
BENCHMARK(prepare_4000x3000_png)->Unit(benchmark::kMillisecond)->Iterations(5);

/// The image's whole way: base64 in the server's result, to the data: URL.
void mcp_4000x3000_image_to_model(benchmark::State& state) {
  json result = {{"content", json::array({{{"type", "image"}, {"data", base64_encode(big_png())},
                                           {"mimeType", "image/png"}}})}};
  auto text = result.dump();
  for (auto _ : state) benchmark::DoNotOptimize(mcp_output_of_result_text(text, 0.5));
}
BENCHMARK(mcp_4000x3000_image_to_model)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
