#include "actors/model/model_request.hpp"

#include <algorithm>
#include <cmath>

#include "actors/model/wire/request_body.hpp"

namespace parley::model_request {

using json = nlohmann::json;

namespace {

std::string endpoint(const provider_setup& setup) {
  auto base = setup.provider.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + (setup.provider.wire == model_config::wire_api::chat ? "/chat/completions"
                                                                     : "/responses");
}

wire::request_options options_of(const provider_setup& setup, const std::string& thread_id) {
  wire::request_options o;
  o.model = setup.model;
  o.instructions = setup.instructions;
  o.developer_instructions = setup.developer_instructions;
  if (!setup.reasoning_effort.empty() || !setup.reasoning_summary.empty()) {
    json reasoning = json::object();
    if (!setup.reasoning_effort.empty()) reasoning["effort"] = setup.reasoning_effort;
    if (!setup.reasoning_summary.empty()) reasoning["summary"] = setup.reasoning_summary;
    o.reasoning = std::move(reasoning);
  }
  o.prompt_cache_key = thread_id;
  if (setup.request_user_input_tool) o.extra_tools.push_back(wire::request_user_input_tool());
  if (setup.request_permissions_tool) o.extra_tools.push_back(wire::request_permissions_tool());
  return o;
}

}  // namespace

http::request build(const provider_setup& setup, const std::vector<json>& input,
                    const std::string& thread_id, bool offer_tools,
                    const std::vector<json>& client_tools) {
  http::request r;
  // Waits its turn among the provider's requests (one gate per provider).
  r.gate = setup.provider.id;
  r.gate_limit = static_cast<std::size_t>(model_config::request_cap(setup.provider));
  // A stream held for a slow client gives its slot to a waiting request.
  r.hold_release_ms = static_cast<long>(setup.provider.stream_hold_release.count());
  r.thread = thread_id;
  http::header_list query(setup.provider.query_params.begin(), setup.provider.query_params.end());
  r.url = http::with_query(endpoint(setup), query);
  r.headers.emplace_back("Content-Type", "application/json");
  r.headers.emplace_back("Accept", "text/event-stream");
  if (!setup.api_key.empty()) r.headers.emplace_back("Authorization", "Bearer " + setup.api_key);
  for (const auto& [name, value] : setup.provider.http_headers) r.headers.emplace_back(name, value);
  for (const auto& [name, variable] : setup.provider.env_http_headers)
    if (const char* value = std::getenv(variable.c_str()); value && *value)
      r.headers.emplace_back(name, value);
  auto options = options_of(setup, thread_id);
  options.offer_tools = offer_tools;
  if (offer_tools)
    options.extra_tools.insert(options.extra_tools.end(), client_tools.begin(), client_tools.end());
  r.body = setup.provider.wire == model_config::wire_api::chat
               ? wire::body_text(wire::chat_request_body(input, options))
               : wire::responses_request_text(input, options);
  return r;
}

bool retryable_status(int status) {
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

std::chrono::milliseconds backoff(unsigned attempt, const http::header_list& headers,
                                  double jitter) {
  if (const auto* after = http::find_header(headers, "retry-after")) {
    char* end = nullptr;
    double seconds = std::strtod(after->c_str(), &end);
    if (end != after->c_str() && seconds >= 0 && seconds < 3600)
      return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }
  double base = 200.0 * std::pow(2.0, std::min(attempt, 10u) - 1.0);
  double ms = std::min(base, 30'000.0) * (0.9 + 0.2 * jitter);
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

std::string status_message(int status, const std::string& body) {
  auto j = json::parse(body, nullptr, false);
  std::string detail;
  if (j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      detail = e["message"].get<std::string>();
    else if (e.is_string())
      detail = e.get<std::string>();
  }
  if (detail.empty()) detail = body.substr(0, 300);
  return "HTTP " + std::to_string(status) + (detail.empty() ? "" : ": " + detail);
}

}  // namespace parley::model_request
