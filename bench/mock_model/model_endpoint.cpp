#include "bench/mock_model/model_endpoint.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/mock_model/chat_sse.hpp"
#include "bench/mock_model/request_turn.hpp"
#include "bench/mock_model/responses_sse.hpp"
#include "bench/mock_model/script.hpp"
#include "bench/mock_model/stream_writer.hpp"

namespace parley::mock_model {

using json = nlohmann::json;

void log_line(const std::string& line) {
  std::string out = "parley-mock-model: " + line + "\n";
  std::fwrite(out.data(), 1, out.size(), stderr);
}

void error_response(httplib::Response& res, int status, const std::string& message,
                    const std::string& type) {
  res.status = status;
  json body = {{"error", {{"message", message}, {"type", type}, {"param", nullptr},
                          {"code", nullptr}}}};
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void model_endpoint::dump(const json& body) {
  auto path = dump_dir_ + "/request-" + std::to_string(++dumped_) + ".json";
  auto pretty = body.dump(2, ' ', false, json::error_handler_t::replace);
  if (!(std::ofstream(path) << pretty << "\n")) log_line("cannot write " + path);
}

void model_endpoint::handle(wire_api api, const httplib::Request& req, httplib::Response& res) {
  json request = json::parse(req.body, nullptr, false);
  if (request.is_discarded() || !request.is_object()) {
    log_line("POST " + req.path + ": body is not a JSON object");
    error_response(res, 400, "body is not a JSON object", "invalid_request_error");
    return;
  }
  if (!dump_dir_.empty()) dump(request);

  static const json none = json::array();
  const char* input_key = api == wire_api::responses ? "input" : "messages";
  const json& input = request.contains(input_key) ? request.at(input_key) : none;
  auto turn = api == wire_api::responses ? responses_turn(input) : chat_turn(input);
  auto s = parse_script(turn.user_text);
  if (!s.errors.empty()) {
    log_line("POST " + req.path + ": " + s.errors.front());
    error_response(res, 400, "mock: " + s.errors.front(), "invalid_request_error");
    return;
  }

  std::size_t response_number = turn.tool_outputs + 1;
  const fault* hit = s.faults.empty() ? nullptr : faults_.hit(s, response_number, input.dump());
  if (hit != nullptr && hit->kind == fault_kind::http) {
    log_line("POST " + req.path + ": " + hit->line);
    if (!hit->retry_after.empty()) res.set_header("Retry-After", hit->retry_after);
    error_response(res, hit->status, hit->line,
                   hit->status == 429 ? "rate_limit_exceeded" : "server_error");
    return;
  }

  stream_request what;
  what.actions = response_actions(s, turn.tool_outputs, command_);
  what.plain = !s.has_directives;
  if (!s.has_directives && !turn.summary.empty() && turn.tool_outputs == 0) {
    // A request ending in a message without directives after a `mock: summary`: a
    // compaction's request for a summary (or the next request after it).
    what.actions = {{action_kind::say, turn.summary}};
    what.plain = false;
  }
  auto model = request.find("model");
  what.model = model != request.end() && model->is_string() ? model->get<std::string>()
                                                            : std::string("mock-model");
  // Small, deterministic usage (10 tokens per input item). Realistic counts (~10k tokens per
  // Codex request) could push long benchmark threads over Codex's auto-compaction limit, and
  // the default script would answer the summarisation request with another command.
  what.usage = s.usage.value_or(token_usage{10 * turn.items, 5});
  if (hit != nullptr && hit->kind == fault_kind::failed) what.failure = hit->message;
  auto options = request.find("stream_options");
  if (options != request.end() && options->is_object()) {
    auto include = options->find("include_usage");
    what.include_usage = include != options->end() && include->is_boolean() && include->get<bool>();
  }

  auto rendered = api == wire_api::responses ? responses_stream(what) : chat_stream(what);
  std::string summary = std::to_string(turn.items) + " input items -> " + rendered.summary;
  if (hit != nullptr) summary += " [" + hit->line + "]";
  log_line("POST " + req.path + ": " + summary);
  write_stream(plan_stream(std::move(rendered.events), hit, s.pace_ms.value_or(pace_ms_)), res);
}

}  // namespace parley::mock_model
