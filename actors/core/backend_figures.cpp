#include "actors/core/backend_figures.hpp"

namespace parley {

namespace {

nlohmann::json quantiles(const latency_histogram& h) {
  return {{"p50", h.quantile_ms(0.50)}, {"p99", h.quantile_ms(0.99)}};
}

}  // namespace

std::string_view to_string(model_outcome o) {
  switch (o) {
    case model_outcome::completed:
      return "completed";
    case model_outcome::http_error:
      return "http_error";
    case model_outcome::unreachable:
      return "unreachable";
    case model_outcome::stream_broken:
      return "stream_broken";
    case model_outcome::model_error:
      return "model_error";
    case model_outcome::abandoned:
      return "abandoned";
    case model_outcome::released:
      return "released";
  }
  return "unknown";
}

void to_json(nlohmann::json& j, const model_figures& x) {
  nlohmann::json ended = nlohmann::json::object();
  for (size_t i = 0; i < model_outcome_count; ++i)
    ended[std::string(to_string(static_cast<model_outcome>(i)))]
        = x.ended[i].load(std::memory_order_relaxed);
  j = {{"waiting", x.waiting.load(std::memory_order_relaxed)},
       {"inFlight", x.in_flight.load(std::memory_order_relaxed)},
       {"requests", std::move(ended)},
       {"retries",
        {{"request", x.request_retries.load(std::memory_order_relaxed)},
         {"stream", x.stream_retries.load(std::memory_order_relaxed)},
         {"held", x.held_retries.load(std::memory_order_relaxed)}}},
       {"queueWaitMs", quantiles(x.queue_wait)},
       {"firstByteMs", quantiles(x.first_byte)},
       {"responseMs", quantiles(x.response)}};
}

void store_write_figures::answered(std::chrono::steady_clock::time_point arrived, bool ok) {
  if (!ok) {
    failed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  written.fetch_add(1, std::memory_order_relaxed);
  latency.record(std::chrono::steady_clock::now() - arrived);
}

void to_json(nlohmann::json& j, const store_write_figures& x) {
  j = {{"written", x.written.load(std::memory_order_relaxed)},
       {"failed", x.failed.load(std::memory_order_relaxed)},
       {"latencyMs", quantiles(x.latency)}};
}

}  // namespace parley
