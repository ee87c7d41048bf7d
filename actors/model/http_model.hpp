#pragma once
// A turn's model when the provider is an HTTP endpoint (the Responses API or
// Chat Completions). One actor per turn: it keeps the turn's whole input
// (the thread so far, read from the store once, then every item the model
// produced and every output it was given) and the request in flight.
//
// A step request is answered from the last response while it has steps
// left; otherwise a new request goes out with the whole input (stateless,
// as Codex). Its bytes arrive as messages on the provider's HTTP thread,
// never blocking a worker: text deltas go to the turn at once (model_delta),
// output items are collected, and `response.completed` turns them into steps
// (response_steps.hpp). Failures are retried as the provider says
// (request_max_retries for connects, 429 and 5xx, honouring Retry-After;
// stream_max_retries for a stream that breaks or stays silent past
// stream_idle_timeout_ms), each retry told to the turn (model_notice). The
// actor watches its turn: when the turn ends (or is interrupted) the request
// is aborted and its connection closed.

#include <memory>

#include "actors/core/interfaces.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/model/provider_setup.hpp"

namespace parley {

/// Spawns the model of one turn; its requests are counted in `telemetry`'s
/// model figures (none when null).
model_actor spawn_http_model(caf::actor_system& sys, std::shared_ptr<const provider_setup> setup,
                             store_actor store, turn_actor turn,
                             std::shared_ptr<runtime_telemetry> telemetry);

}  // namespace parley
