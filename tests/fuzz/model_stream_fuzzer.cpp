// libFuzzer target: bytes from a model provider's HTTP body. They go through
// the SSE parser and both stream mappers, split where the input's first byte
// says (a body arrives in chunks of any size), and every finished item is
// decoded as a tool call, answered, and put into both request bodies, as a
// turn would. Nothing may throw or crash; after a stream's end nothing more
// may come out of it. Every event the delta scanner reads must map as
// nlohmann's path maps it.

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include "actors/model/wire/chat_stream.hpp"
#include "actors/model/wire/delta_scan.hpp"
#include "actors/model/wire/request_body.hpp"
#include "actors/model/wire/responses_stream.hpp"
#include "actors/model/wire/tool_calls.hpp"

namespace {

using namespace parley::wire;

void use_items(const std::vector<stream_event>& events, std::vector<nlohmann::json>& history) {
  for (const auto& event : events) {
    const auto* done = std::get_if<output_item_done>(&event);
    if (!done) continue;
    history.push_back(done->item);
    if (!is_tool_call(done->item)) continue;
    auto call = decode_tool_call(done->item);
    history.push_back(tool_output_item(call, call.error.empty() ? call.command + call.patch : call.error));
  }
}

template <class Stream>
std::vector<stream_event> run(Stream& stream, std::string_view body, std::size_t chunk) {
  std::vector<stream_event> all;
  for (std::size_t at = 0; at < body.size(); at += chunk) {
    bool ended_before = stream.ended();
    auto events = stream.feed(body.substr(at, chunk));
    if (ended_before && !events.empty()) std::abort();
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (ends_stream(events[i]) && i + 1 != events.size()) std::abort();  // nothing after the end
    }
    all.insert(all.end(), events.begin(), events.end());
  }
  return all;
}

bool same_delta(const stream_event& a, const stream_event& b) {
  if (const auto* t = std::get_if<text_delta>(&a)) {
    const auto* u = std::get_if<text_delta>(&b);
    return u && t->item_id == u->item_id && t->delta == u->delta;
  }
  const auto* r = std::get_if<reasoning_delta>(&a);
  const auto* s = std::get_if<reasoning_delta>(&b);
  return r && s && r->item_id == s->item_id && r->delta == s->delta && r->summary == s->summary
         && r->index == s->index;
}

// The whole mapping (the scanner first: deltas, and the events parley
// ignores) against nlohmann's alone: the same event, or nothing from both.
bool same_mapping(const std::optional<stream_event>& a, const std::optional<stream_event>& b) {
  if (!a || !b) return !a && !b;
  if (a->index() != b->index()) return false;
  if (std::holds_alternative<text_delta>(*a) || std::holds_alternative<reasoning_delta>(*a))
    return same_delta(*a, *b);
  if (const auto* e = std::get_if<stream_error>(&*a))
    return e->message == std::get<stream_error>(*b).message;
  return true;
}

// The scanner's reading of each event against nlohmann's (the body as one
// event per blank line; the data as the first byte's split leaves it too).
void check_scanner(std::string_view body) {
  sse_parser sse(4096);
  for (const auto& event : sse.feed(body)) {
    if (!same_mapping(map_responses_event(event), map_responses_event_dom(event))) std::abort();
    auto fast = scan_delta_event(event);
    if (!fast) continue;
    auto dom = map_responses_event_dom(event);
    if (!dom || !same_delta(*fast, *dom)) std::abort();
  }
  for (const char* name : {"response.output_text.done", ""}) {
    sse_event ignored{name, std::string(body)};
    if (!same_mapping(map_responses_event(ignored), map_responses_event_dom(ignored))) std::abort();
  }
  // Data alone, as if it had come in a data: line.
  auto fast = scan_delta_event(sse_event{"response.output_text.delta", std::string(body)});
  if (fast) {
    auto dom = map_responses_event_dom(sse_event{"response.output_text.delta", std::string(body)});
    if (!dom || !same_delta(*fast, *dom)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::size_t chunk = 1 + data[0] % 64;
  std::string_view body{reinterpret_cast<const char*>(data) + 1, size - 1};

  check_scanner(body);

  std::vector<nlohmann::json> history;
  responses_stream responses(4096);
  use_items(run(responses, body, chunk), history);
  chat_stream chat(4096);
  auto chat_events = run(chat, body, chunk);
  auto tail = chat.finish();
  chat_events.insert(chat_events.end(), tail.begin(), tail.end());
  use_items(chat_events, history);
  if (chat.completed() && !std::holds_alternative<response_completed>(chat_events.back())) std::abort();

  request_options options;
  options.model = "m";
  // The Responses body written as text is the DOM's dump, byte for byte,
  // whatever the model's items held (a stray \xff, an escape), with the
  // body's text itself as the instructions.
  options.instructions = std::string(body.substr(0, 256));
  if (body_text(responses_request_body(history, options)) != responses_request_text(history, options))
    std::abort();
  (void)body_text(chat_request_body(history, options));
  return 0;
}
