#include "bench/mock_model/stream_writer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace parley::mock_model {

namespace {

// Sleeps `ms`, in slices, giving up (false) as soon as the client has gone, so a stalled
// stream whose client timed out frees its thread.
bool pause(long ms, httplib::DataSink& sink) {
  using namespace std::chrono;
  constexpr long slice_ms = 50;
  auto deadline = steady_clock::now() + milliseconds(ms);
  while (steady_clock::now() < deadline) {
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    std::this_thread::sleep_for(milliseconds(std::min<long>(slice_ms, std::max<long>(left, 1))));
    if (!sink.is_writable()) return false;
  }
  return true;
}

std::atomic<std::size_t> open_streams{0};
std::atomic<std::size_t> most_streams{0};

// One stream counted from its start until release() (or its end, whichever comes first).
class stream_ticket {
 public:
  stream_ticket() {
    auto now = ++open_streams;
    auto most = most_streams.load();
    while (now > most && !most_streams.compare_exchange_weak(most, now)) {
    }
  }
  ~stream_ticket() { release(); }
  stream_ticket(const stream_ticket&) = delete;
  stream_ticket& operator=(const stream_ticket&) = delete;
  void release() {
    if (held_) --open_streams;
    held_ = false;
  }

 private:
  bool held_ = true;
};

struct progress {
  stream_plan plan;
  std::size_t next = 0;
  stream_ticket ticket;
};

}  // namespace

void write_stream(stream_plan planned, httplib::Response& res) {
  auto state = std::make_shared<progress>();
  state->plan = std::move(planned);
  res.set_header("Cache-Control", "no-cache");
  // cpp-httplib calls this until it calls done() (or returns false: the connection closes
  // without the last chunk, which is how a cut or a failed write ends the stream).
  res.set_chunked_content_provider(
      "text/event-stream", [state](std::size_t, httplib::DataSink& sink) {
        const auto& plan = state->plan;
        std::size_t i = state->next;
        if (i >= plan.events.size()) {
          state->ticket.release();
          sink.done();
          return true;
        }
        if (i > 0 && plan.pace_ms > 0 && !pause(plan.pace_ms, sink)) return false;
        const auto& bytes = plan.events[i].bytes;
        if (plan.cut_at == i) {
          sink.write(bytes.data(), std::max<std::size_t>(1, bytes.size() / 2));
          state->ticket.release();
          return false;
        }
        if (!sink.write(bytes.data(), bytes.size())) return false;
        if (plan.stall_after == i) {
          if (!pause(plan.stall_ms, sink) || plan.close_after_stall) return false;
        }
        if (++state->next == plan.events.size()) {
          state->ticket.release();
          sink.done();
        }
        return true;
      });
}

stream_counts streams() { return {open_streams.load(), most_streams.load()}; }

}  // namespace parley::mock_model
