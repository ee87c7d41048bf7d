#include "actors/model/wire/responses_stream.hpp"

#include <string>
#include <utility>

#include "actors/model/wire/delta_scan.hpp"
#include "actors/model/wire/json_fields.hpp"
#include "actors/model/wire/usage.hpp"

namespace parley::wire {

namespace {

using namespace detail;
using handler = std::optional<stream_event> (*)(const json& data);

stream_error missing(const char* type, const char* what) {
  return stream_error{std::string(type) + " event without " + what};
}

std::optional<stream_event> on_created(const json& data) {
  const json* response = object_field(data, "response");
  return response_created{response ? string_or(*response, "id") : std::string()};
}

std::optional<stream_event> on_item_added(const json& data) {
  const json* item = object_field(data, "item");
  if (!item) return missing("response.output_item.added", "an 'item' object");
  return output_item_added{*item};
}

std::optional<stream_event> on_text_delta(const json& data) {
  const std::string* delta = string_field(data, "delta");
  if (!delta) return missing("response.output_text.delta", "a string 'delta'");
  return text_delta{string_or(data, "item_id"), *delta};
}

std::optional<stream_event> reasoning(const json& data, const char* type, const char* index,
                                      bool summary) {
  const std::string* delta = string_field(data, "delta");
  if (!delta) return missing(type, "a string 'delta'");
  return reasoning_delta{string_or(data, "item_id"), *delta, summary,
                         int_field(data, index).value_or(0)};
}

std::optional<stream_event> on_summary_delta(const json& data) {
  return reasoning(data, "response.reasoning_summary_text.delta", "summary_index", true);
}

std::optional<stream_event> on_reasoning_delta(const json& data) {
  return reasoning(data, "response.reasoning_text.delta", "content_index", false);
}

std::optional<stream_event> on_item_done(const json& data) {
  const json* item = object_field(data, "item");
  if (!item || !string_field(*item, "type")) {
    return missing("response.output_item.done", "an 'item' object with a 'type'");
  }
  return output_item_done{*item};
}

std::optional<stream_event> on_completed(const json& data) {
  const json* response = object_field(data, "response");
  const std::string* id = response ? string_field(*response, "id") : nullptr;
  if (!id) return missing("response.completed", "a 'response' with a string 'id'");
  const json* usage = object_field(*response, "usage");
  return response_completed{*id, usage ? std::optional(responses_usage(*usage)) : std::nullopt};
}

std::optional<stream_event> on_failed(const json& data) {
  const json* response = object_field(data, "response");
  const json* error = response ? object_field(*response, "error") : nullptr;
  if (!error) return response_failed{"the model provider reported a failure without details", ""};
  return response_failed{string_or(*error, "message", "the model provider reported a failure"),
                         string_or(*error, "code")};
}

std::optional<stream_event> on_incomplete(const json& data) {
  const json* response = object_field(data, "response");
  const json* details = response ? object_field(*response, "incomplete_details") : nullptr;
  std::string reason = details ? string_or(*details, "reason", "unknown") : "unknown";
  return response_failed{"the response is incomplete (reason: " + reason + ")", "incomplete"};
}

// The top-level error event: {"type":"error","code":...,"message":...}.
std::optional<stream_event> on_error(const json& data) {
  return response_failed{string_or(data, "message", "the model provider sent an error"),
                         string_or(data, "code")};
}

handler handler_for(std::string_view type) {
  static const std::pair<std::string_view, handler> table[] = {
      {"response.created", on_created},
      {"response.output_item.added", on_item_added},
      {"response.output_text.delta", on_text_delta},
      {"response.reasoning_summary_text.delta", on_summary_delta},
      {"response.reasoning_text.delta", on_reasoning_delta},
      {"response.output_item.done", on_item_done},
      {"response.completed", on_completed},
      {"response.failed", on_failed},
      {"response.incomplete", on_incomplete},
      {"error", on_error},
  };
  for (const auto& [name, fn] : table) {
    if (name == type) return fn;
  }
  return nullptr;
}

}  // namespace

std::optional<stream_event> map_responses_event(const sse_event& event) {
  if (event.data == "[DONE]") return std::nullopt;  // some compatible servers end so
  if (auto delta = scan_delta_event(event)) return delta;
  // An event parley does not use, read without a DOM. One named as an event
  // parley uses goes straight to nlohmann (its data is read there anyway).
  if (!handler_for(event.event)) {
    if (auto type = scanned_type(event); type && !handler_for(*type)) return std::nullopt;
  }
  return map_responses_event_dom(event);
}

std::optional<stream_event> map_responses_event_dom(const sse_event& event) {
  if (event.data == "[DONE]") return std::nullopt;
  auto data = json::parse(event.data, nullptr, false);
  std::string name = event.event.empty() ? "an unnamed" : "a '" + event.event + "'";
  if (data.is_discarded()) {
    return stream_error{"the data of " + name + " event is not JSON: " + preview(event.data)};
  }
  if (!data.is_object()) {
    return stream_error{"the data of " + name + " event is not a JSON object: " +
                        preview(event.data)};
  }
  const std::string* type = string_field(data, "type");
  handler fn = handler_for(type ? std::string_view(*type) : std::string_view(event.event));
  return fn ? fn(data) : std::nullopt;
}

std::vector<stream_event> responses_stream::feed(std::string_view bytes) {
  std::vector<stream_event> out;
  if (ended_) return out;
  // Events are mapped as the parser completes them, in its own buffers;
  // what follows the stream's end is parsed but not mapped.
  sse_.feed(bytes, [this, &out](const sse_event& sse) {
    if (ended_) return;
    auto event = map_responses_event(sse);
    if (!event) return;
    completed_ = std::holds_alternative<response_completed>(*event);
    ended_ = ends_stream(*event);
    out.push_back(std::move(*event));
  });
  if (!ended_ && sse_.error()) {
    ended_ = true;
    out.push_back(stream_error{*sse_.error()});
  }
  return out;
}

}  // namespace parley::wire
