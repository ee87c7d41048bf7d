#pragma once
// An incremental parser of server-sent events (the WHATWG "event stream"
// format) as model providers stream them over HTTP. Bytes go in as they
// arrive, split anywhere; whole events come out.
//
//   event: response.output_text.delta      <- optional; names the event
//   data: {"delta":"Hel"}                   <- one or more; lines joined by \n
//   id: 42                                  <- kept: last_event_id() (resuming)
//   retry: 3000                             <- kept: retry_ms() (reconnecting)
//   : a comment                             <- ignored
//   (blank line)                            <- dispatches the event
//
// Lines end in \n, \r\n or \r. An event without data lines is not dispatched.
// One event may hold at most `max_event_bytes`; past that the parser stops and
// error() says why (a provider gone wrong must not grow our memory unbounded).
// Pure: no I/O, no CAF, nothing thrown.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace parley::wire {

/// One dispatched event. `event` is empty when the server sent no `event:`
/// field (Chat Completions streams send bare `data:` lines).
struct sse_event {
  std::string event;
  std::string data;
};

inline bool operator==(const sse_event& a, const sse_event& b) {
  return a.event == b.event && a.data == b.data;
}

class sse_parser {
 public:
  static constexpr std::size_t default_max_event_bytes = 16u << 20;  // 16 MiB

  explicit sse_parser(std::size_t max_event_bytes = default_max_event_bytes)
      : max_event_bytes_(max_event_bytes) {}

  /// Consumes `bytes` and returns the events they complete, in order. After
  /// an error, returns nothing and ignores further input.
  std::vector<sse_event> feed(std::string_view bytes);

  /// The same, handing each event to `on_event(const sse_event&)` as it is
  /// completed. The event is the parser's own (valid during the call): no
  /// event is moved out, so its buffers serve the next one, and a stream of
  /// small events allocates nothing per event (issue 23).
  template <class F>
  void feed(std::string_view bytes, F&& on_event) {
    using fn = std::remove_reference_t<F>;
    feed_to(bytes, [](void* f, const sse_event& e) { (*static_cast<fn*>(f))(e); },
            const_cast<void*>(static_cast<const void*>(&on_event)));
  }

  /// Why parsing stopped (an event over the size bound), if it did.
  const std::optional<std::string>& error() const { return error_; }

  /// The stream's last event id (WHATWG's "last event ID buffer": the last
  /// `id:` field of a dispatched event, kept across events; one holding NUL
  /// is ignored), "" before any: what a client resumes with (Last-Event-ID).
  const std::string& last_event_id() const { return last_event_id_; }
  /// The reconnection time the server asked for (`retry:` digits only), if
  /// it did.
  std::optional<long> retry_ms() const { return retry_ms_; }

 private:
  using event_sink = void (*)(void* context, const sse_event& event);
  void feed_to(std::string_view bytes, event_sink sink, void* context);
  void take_line(std::string_view line, event_sink sink, void* context);
  void take_field(std::string_view name, std::string_view value);
  bool over_bound(std::size_t more);

  std::size_t max_event_bytes_;
  std::string partial_line_;   // bytes after the last line end
  bool skip_next_lf_ = false;  // the last chunk ended in \r: a leading \n is its pair
  sse_event event_;  // the event being read: its name and data
  bool has_data_ = false;
  std::string id_;             // the id field of the event being read
  std::string last_event_id_;  // set as an event is dispatched
  std::optional<long> retry_ms_;
  std::optional<std::string> error_;
};

}  // namespace parley::wire
