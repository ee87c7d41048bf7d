#pragma once
// One request to a provider, as data: the HTTP request for a thread's input,
// and what to do when it fails (retry after how long, or give up with what
// message). Pure: no actors; tested alone.

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actors/model/http/request.hpp"
#include "actors/model/provider_setup.hpp"

namespace parley::model_request {

/// The request for `input` (the whole thread, Responses items): the URL
/// with its query parameters, the key as a bearer token, the provider's
/// headers, a streaming body in the provider's wire API.
/// `offer_tools` false: a request that may call no tool (a compaction's).
/// `client_tools`: the thread's client-declared tools, offered after
/// parley's own (Responses function tools).
http::request build(const provider_setup& setup, const std::vector<nlohmann::json>& input,
                    const std::string& thread_id, bool offer_tools = true,
                    const std::vector<nlohmann::json>& client_tools = {});

/// Whether a status is worth another attempt (429, 5xx; 408 and 409 too).
bool retryable_status(int status);

/// How long to wait before attempt `attempt` (1 = the first retry):
/// exponential from 200 ms with ±10% jitter, capped at 30 s; a server's
/// Retry-After (seconds) wins when given.
std::chrono::milliseconds backoff(unsigned attempt, const http::header_list& headers,
                                  double jitter /* in [0, 1) */);

/// A message for a failed status: the provider's own `error.message` when
/// the body has one, else the start of the body.
std::string status_message(int status, const std::string& body);

}  // namespace parley::model_request
