#pragma once
// What the runtime's two back ends do for it, for GET /metrics and
// parley/stats: the model provider's requests (waiting for its cap, in
// flight, how each attempt ended, retries, latencies) and the store's writes
// (how long a write takes to be acknowledged, how many failed). The model
// actors and the store writers record on their own threads; readers take the
// atomics as they are.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "actors/core/latency_histogram.hpp"

namespace parley {

/// How one attempt at a model request ended (a label of GET /metrics).
enum class model_outcome : size_t {
  completed,      // the whole response
  http_error,     // a status other than 200
  unreachable,    // no response (connect, TLS, reset before a status)
  stream_broken,  // the stream ended or went silent before completing
  model_error,    // the model said it failed, or its stream was malformed
  abandoned,      // the turn ended first (done, interrupted, failed)
  released,       // held for a slow client, its slot given to a waiting request
};
constexpr size_t model_outcome_count = 7;
std::string_view to_string(model_outcome o);

struct model_figures {
  std::atomic<int64_t> waiting{0};    // sent, waiting for the provider's cap
  std::atomic<int64_t> in_flight{0};  // past the cap, not yet ended
  std::array<std::atomic<uint64_t>, model_outcome_count> ended{};
  std::atomic<uint64_t> request_retries{0};  // after no or a failed response
  std::atomic<uint64_t> stream_retries{0};   // after a stream broke
  std::atomic<uint64_t> held_retries{0};     // after a held stream was released
  latency_histogram queue_wait;              // sent -> past the cap
  latency_histogram first_byte;              // past the cap -> the first bytes of the body,
                                             // less the time the stream was held
  latency_histogram response;                // past the cap -> completed (completed ones)
};
void to_json(nlohmann::json& j, const model_figures& x);

struct store_write_figures {
  /// A durable write: from its arrival at the store's writer to its
  /// acknowledgement (the rollout line synced, the database row committed).
  latency_histogram latency;
  std::atomic<uint64_t> written{0};
  std::atomic<uint64_t> failed{0};  // answered with an error (not stored)

  /// A durable write that arrived at `arrived` was answered now: stored
  /// (`ok`) or not.
  void answered(std::chrono::steady_clock::time_point arrived, bool ok);
};
void to_json(nlohmann::json& j, const store_write_figures& x);

}  // namespace parley
