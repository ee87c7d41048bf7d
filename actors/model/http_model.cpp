#include "actors/model/http_model.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
#include <variant>

#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "actors/model/model_request.hpp"
#include "actors/model/response_steps.hpp"
#include "actors/model/wire/tool_calls.hpp"
#include "actors/model/tool_results.hpp"
#include "actors/model/wire/chat_stream.hpp"
#include "actors/model/wire/compaction.hpp"
#include "actors/model/wire/request_body.hpp"
#include "actors/model/wire/responses_stream.hpp"
#include "actors/store/response_items.hpp"
#include "protocol/output_truncation.hpp"

namespace parley {

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

// What the HTTP thread tells the actor about one attempt (named by its
// number: a message of an earlier attempt is stale and ignored).
using http_head_atom = caf::atom_constant<caf::atom("httphead")>;
using http_body_atom = caf::atom_constant<caf::atom("httpbody")>;
using http_done_atom = caf::atom_constant<caf::atom("httpdone")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using idle_atom = caf::atom_constant<caf::atom("idlecheck")>;
using http_admitted_atom = caf::atom_constant<caf::atom("httpadmit")>;
using http_released_atom = caf::atom_constant<caf::atom("httprels")>;

/// A seed for a turn's retry jitter. A std::random_device made and asked
/// costs ~200 us on the 2-core machine (1.4% of parley's samples in the
/// streaming profile, issue 23, at one a turn); a thread asks it once.
unsigned jitter_seed() {
  thread_local std::minstd_rand seeds{std::random_device{}()};
  return static_cast<unsigned>(seeds());
}

/// The body bytes the HTTP thread has handed on and the actor has not taken
/// yet. The first piece into an empty box sends the actor one message; the
/// pieces that come before it takes them join it. So what one read of the
/// socket held (curl hands each HTTP chunk on alone: the mock writes each
/// SSE event as one) reaches the actor as one message, and nothing waits
/// for more to come.
struct body_box {
  std::mutex lock;
  std::string bytes;
  /// Appends; true when the box was empty (the actor must be told).
  bool put(std::string_view piece) {
    std::lock_guard<std::mutex> guard(lock);
    bool was_empty = bytes.empty();
    bytes.append(piece);
    return was_empty;
  }
  std::string take() {
    std::lock_guard<std::mutex> guard(lock);
    std::string out;
    out.swap(bytes);
    return out;
  }
};
using body_box_ptr = std::shared_ptr<body_box>;

}  // namespace
}  // namespace parley

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::body_box_ptr)

namespace parley {
namespace {

using http_model_actor = model_actor::extend<
    caf::reacts_to<http_head_atom, uint64_t, int, std::string>,
    caf::reacts_to<http_body_atom, uint64_t, body_box_ptr>,
    caf::reacts_to<http_done_atom, uint64_t, bool, bool, std::string>,
    caf::reacts_to<retry_atom, uint64_t>, caf::reacts_to<idle_atom, uint64_t>,
    caf::reacts_to<http_admitted_atom, uint64_t>, caf::reacts_to<http_released_atom, uint64_t>>;

/// How much of one attempt's body is on its way (issue 22): handed on by
/// the HTTP thread and not yet through to every client's outgoing queue (see
/// chunk_credit). Past `limit` the transfer pauses (sink::ready) until it is
/// under half of it again. So a stream never runs far ahead of its clients'
/// queues, and a hold (backpressure) is felt at once rather than after all
/// that was read already; streams cannot fill the mailboxes between.
struct flow_window {
  static constexpr size_t limit = 8 * 1024;
  std::atomic<size_t> unread{0};
  std::atomic<bool> stalled{false};  // the transfer waits for room
};

/// One piece of the body, handed on: its bytes count in the window until the
/// last thing made of it is gone (the actor's parsing, the deltas, their
/// events once every client has queued them). Then the transfer may go on.
struct chunk_credit {
  chunk_credit(std::shared_ptr<flow_window> w, std::shared_ptr<http::client> c,
               http::request_id id, size_t n)
      : window(std::move(w)), client(std::move(c)), request(id), bytes(n) {}
  chunk_credit(const chunk_credit&) = delete;
  chunk_credit& operator=(const chunk_credit&) = delete;
  std::shared_ptr<flow_window> window;
  std::shared_ptr<http::client> client;
  http::request_id request = 0;
  size_t bytes = 0;
  ~chunk_credit() {
    auto left = window->unread.fetch_sub(bytes) - bytes;
    if (left < flow_window::limit / 2 && window->stalled.exchange(false)) client->flow(request);
  }
};

/// Hands the response of one attempt to the actor, on the HTTP thread.
class relay : public http::sink {
 public:
  relay(http_model_actor actor, uint64_t attempt, std::shared_ptr<flow_window> window)
      : actor_(std::move(actor)), attempt_(attempt), window_(std::move(window)) {}
  bool ready() override {
    if (window_->unread.load() < flow_window::limit) return true;
    // Said before looking again: the actor, taking a piece after this,
    // sees the flag and lets the transfer go on (or we see its room here).
    window_->stalled.store(true);
    if (window_->unread.load() < flow_window::limit) {
      window_->stalled.store(false);
      return true;
    }
    return false;
  }
  void on_status(int status, const http::header_list& headers) override {
    const auto* after = http::find_header(headers, "retry-after");
    caf::anon_send(actor_, http_head_atom::value, attempt_, status,
                   after ? *after : std::string{});
  }
  void on_body(std::string_view chunk) override {
    if (chunk.empty()) return;
    window_->unread.fetch_add(chunk.size());
    if (box_->put(chunk)) caf::anon_send(actor_, http_body_atom::value, attempt_, box_);
  }
  void on_admitted() override { caf::anon_send(actor_, http_admitted_atom::value, attempt_); }
  void on_done(const http::outcome& o) override {
    if (o.released()) return caf::anon_send(actor_, http_released_atom::value, attempt_);
    caf::anon_send(actor_, http_done_atom::value, attempt_, o.ok(), o.aborted(), o.message);
  }

 private:
  http_model_actor actor_;
  uint64_t attempt_;
  std::shared_ptr<flow_window> window_;
  body_box_ptr box_ = std::make_shared<body_box>();
};

using stream_parser = std::variant<wire::responses_stream, wire::chat_stream>;

/// A compaction under way: the model summarises input[0, keep_from); what
/// follows it (the turn's new message, at a turn's first request) joins
/// the compacted context unchanged.
struct compaction_state {
  size_t keep_from = 0;
  bool manual = false;  // thread/compact/start: the step's answer is the result
};

/// Where an attempt stands in the model figures: waiting for the provider's
/// cap, then in flight, then ended (counted once, by how it ended). The
/// gauges follow it; an attempt dropped without an end (the actor gone
/// mid-request) ends as abandoned.
class attempt_figures {
 public:
  attempt_figures() = default;
  explicit attempt_figures(std::shared_ptr<runtime_telemetry> t) : t_(std::move(t)) {
    if (t_) t_->model.waiting.fetch_add(1, std::memory_order_relaxed);
    phase_ = phase::waiting;
  }
  attempt_figures(attempt_figures&& o) noexcept { *this = std::move(o); }
  attempt_figures& operator=(attempt_figures&& o) noexcept {
    if (this != &o) {
      end(model_outcome::abandoned);
      t_ = std::move(o.t_);
      phase_ = std::exchange(o.phase_, phase::ended);
      sent_ = o.sent_;
      admitted_ = o.admitted_;
      first_byte_seen_ = o.first_byte_seen_;
      holding_ = o.holding_;
      held_since_ = o.held_since_;
      held_for_ = o.held_for_;
    }
    return *this;
  }
  ~attempt_figures() { end(model_outcome::abandoned); }

  void admitted() {
    if (phase_ != phase::waiting) return;
    phase_ = phase::in_flight;
    admitted_ = clock_type::now();
    if (!t_) return;
    t_->model.waiting.fetch_sub(1, std::memory_order_relaxed);
    t_->model.in_flight.fetch_add(1, std::memory_order_relaxed);
    t_->model.queue_wait.record(admitted_ - sent_);
  }
  /// The stream is held for a slow client (or no longer): the time until
  /// its first bytes leaves that out (a stream started held gets its first
  /// bytes only once its client has caught up).
  void held(bool on) {
    if (on == holding_) return;
    holding_ = on;
    auto now = clock_type::now();
    if (on)
      held_since_ = now;
    else if (phase_ == phase::in_flight)
      held_for_ += now - std::max(held_since_, admitted_);
  }
  void body_bytes() {
    if (phase_ != phase::in_flight || first_byte_seen_) return;
    first_byte_seen_ = true;
    auto now = clock_type::now();
    auto held_time = held_for_;
    if (holding_) held_time += now - std::max(held_since_, admitted_);
    if (t_) t_->model.first_byte.record(now - admitted_ - held_time);
  }
  void end(model_outcome how) {
    if (phase_ == phase::ended) return;
    auto was = std::exchange(phase_, phase::ended);
    if (!t_) return;
    auto& m = t_->model;
    (was == phase::waiting ? m.waiting : m.in_flight).fetch_sub(1, std::memory_order_relaxed);
    m.ended[static_cast<size_t>(how)].fetch_add(1, std::memory_order_relaxed);
    if (how == model_outcome::completed && was == phase::in_flight)
      m.response.record(clock_type::now() - admitted_);
  }

 private:
  enum class phase { waiting, in_flight, ended };
  std::shared_ptr<runtime_telemetry> t_;
  phase phase_ = phase::ended;
  clock_type::time_point sent_ = clock_type::now();
  clock_type::time_point admitted_;
  bool first_byte_seen_ = false;
  bool holding_ = false;
  clock_type::time_point held_since_;
  clock_type::duration held_for_{0};  // held while in flight, before the first bytes
};

/// The attempt in flight.
struct attempt_state {
  uint64_t number = 0;
  http::request_id request = 0;
  bool running = false;
  /// Sent, and not yet out of the HTTP client's queue (the provider's cap):
  /// waiting for a slot is not the stream's silence.
  bool queued = true;
  int status = 0;
  std::string retry_after;
  std::string error_body;  // a failed status's body (bounded)
  stream_parser stream;
  std::shared_ptr<flow_window> window = std::make_shared<flow_window>();
  std::vector<json> output;  // the response's finished items
  clock_type::time_point last_bytes;
  attempt_figures figures;
};

struct http_model_state {
  static inline const char* name = "http_model";
  std::shared_ptr<const provider_setup> setup;
  store_actor store;
  turn_actor turn;
  std::shared_ptr<runtime_telemetry> telemetry;  // null: nothing counted
  http::header_list sent_headers;  // to redact from any message
  std::vector<json> input;         // everything the next request sends
  /// input[recorded..] is this turn's context the turn has not been handed
  /// yet (the history and the user's message are stored already).
  size_t recorded = 0;
  bool loaded = false;
  bool answered = false;  // a response without tool calls: the turn is done
  std::deque<planned_step> ready;
  /// Steps handed to the turn whose result is still to come, in order; the
  /// call a result answers (none for a say).
  std::deque<std::optional<wire::tool_call>> handed;
  size_t results_seen = 0;
  /// Messages steered into the turn: how many of the context's were taken,
  /// and those that join the input at the next request (after the outputs
  /// of every call of the answer before it, as Codex orders them).
  size_t steered_seen = 0;
  std::deque<std::string> steered;
  std::optional<caf::typed_response_promise<model_step>> promise;
  attempt_state attempt;
  unsigned request_retries = 0;
  unsigned stream_retries = 0;
  std::minstd_rand jitter{jitter_seed()};
  std::string thread_id;
  /// The tokens of the thread's last request (its context's size); at the
  /// configured limit the next request compacts first.
  int64_t last_tokens = 0;
  bool requested = false;  // this turn sent a request already
  std::optional<compaction_state> compaction;
  /// The thread's client-declared tools, as offered, and their names (a
  /// call of one becomes a call_tool step).
  std::vector<nlohmann::json> client_tools;
  std::set<std::string> client_tool_names;
  /// A review turn: the input is the review's own (instructions, prompt),
  /// and nothing of it becomes the thread's context.
  bool review = false;
  /// A client of the thread is behind (issue 22): the stream is not read
  /// (client::pause), and its silence meanwhile is not the model's.
  bool held = false;
  /// The attempt was released while held (its slot given to a waiting
  /// request): it is asked again once the client has caught up.
  bool ask_when_caught_up = false;
  /// The credit of the body piece being parsed, for the deltas made of it.
  std::shared_ptr<const void> piece_credit;

  ~http_model_state() {
    if (attempt.running && setup) setup->client->abort(attempt.request);
  }
};

using self_ptr = http_model_actor::stateful_pointer<http_model_state>;

void send_request(self_ptr self);
void ask_again(self_ptr self);
void start_compaction(self_ptr self, size_t keep_from, bool manual);

/// This turn's items the turn has not been handed yet, verbatim.
std::vector<json> unrecorded(http_model_state& st) {
  if (st.review) {
    st.recorded = st.input.size();
    return {};
  }
  auto from = st.input.begin() + static_cast<std::ptrdiff_t>(std::min(st.recorded, st.input.size()));
  std::vector<json> out(from, st.input.end());
  st.recorded = st.input.size();
  return out;
}

void deliver(self_ptr self, model_step step) {
  auto& st = self->state;
  if (!st.promise) return;
  step.context = unrecorded(st);
  st.promise->deliver(std::move(step));
  st.promise.reset();
}

void fail(self_ptr self, const std::string& why) {
  auto& st = self->state;
  auto message = http::redact(why, st.sent_headers);
  PARLEY_WARN("model event=failed provider={} reason=\"{}\"", st.setup->provider.id, message);
  // What the turn did so far (a command's output, say) stays in the history.
  if (auto context = unrecorded(st); !context.empty()) {
    model_notice n;
    n.context = std::move(context);
    self->send(st.turn, atom::notice::value, std::move(n));
  }
  if (st.promise) st.promise->deliver(make_error(errc::internal, message));
  st.promise.reset();
}

/// The next step from what the model already said, or a new request.
void answer_step(self_ptr self) {
  auto& st = self->state;
  if (!st.ready.empty()) {
    auto next = std::move(st.ready.front());
    st.ready.pop_front();
    st.handed.push_back(std::move(next.call));
    return deliver(self, std::move(next.step));
  }
  if (!st.steered.empty()) {
    // The model has more to answer: what the user steered in.
    for (auto& text : st.steered) st.input.push_back(wire::user_message(text));
    st.steered.clear();
    st.answered = false;
  }
  if (st.answered) return deliver(self, model_step{});  // done
  auto limit = st.setup->auto_compact_token_limit;
  if (limit > 0 && st.last_tokens >= limit) {
    // Past the limit: compact first. At the turn's first request the
    // user's new message stays out of the summary and follows it.
    auto keep_from
        = st.requested ? st.input.size() : st.input.size() - std::min<size_t>(1, st.input.size());
    return start_compaction(self, keep_from, false);
  }
  send_request(self);
}

/// The turn's results since the last step: each call's output joins the input.
void take_results(self_ptr self, const model_context& ctx) {
  auto& st = self->state;
  for (; st.results_seen < ctx.step_results.size(); ++st.results_seen) {
    if (st.handed.empty()) continue;
    auto call = std::move(st.handed.front());
    st.handed.pop_front();
    if (!call) continue;
    const auto& result = ctx.step_results[st.results_seen];
    // The model gets at most its budget of each output, cut as Codex cuts
    // it when it records one (the model's limit and 20% for serialisation);
    // the client's item keeps the whole output. The config's
    // tool_output_token_limit replaces the model's limit.
    auto budget = protocol::tool_output_policy(st.setup->model, st.setup->tool_output_token_limit)
                      .scaled(1.2);
    // A client tool's answer goes back as its content (text, images).
    if (result.what == step_result::kind::answered && result.content_items.is_array())
      st.input.push_back(wire::tool_content_output_item(
          *call, protocol::truncate_output_parts(result.content_items, budget)));
    else
      st.input.push_back(wire::tool_output_item(
          *call, protocol::truncate_text(tool_result_text(result, *call), budget)));
  }
}

/// Messages steered into the turn since the last step wait for the next
/// request.
void take_steered(self_ptr self, const model_context& ctx) {
  auto& st = self->state;
  for (; st.steered_seen < ctx.steered.size(); ++st.steered_seen)
    st.steered.push_back(ctx.steered[st.steered_seen]);
}

/// Whether an input item is something the model produced (a response's
/// output), not something it was given.
bool is_output_item(const json& item) {
  if (!item.is_object()) return false;
  auto type = item.value("type", std::string{});
  if (type == "message") return item.value("role", std::string{}) == "assistant";
  return type == "reasoning" || wire::is_tool_call(item);
}

/// A turn going on after a restart: its context so far is stored, the call
/// `resumed_call` is the one whose result the turn brings now, and the
/// calls the model made after it in the same answer are still to come.
void resume_input(self_ptr self, const model_context& ctx, std::vector<json> history) {
  auto& st = self->state;
  st.loaded = true;
  st.input = std::move(history);
  st.recorded = st.input.size();
  auto at = std::find_if(st.input.begin(), st.input.end(), [&](const json& item) {
    return item.is_object() && wire::is_tool_call(item)
           && item.value("call_id", std::string{}) == ctx.resumed_call;
  });
  if (at != st.input.end()) {
    // The answer the call came in: the output items around it.
    auto first = at, last = at + 1;
    while (first != st.input.begin() && is_output_item(*(first - 1))) --first;
    while (last != st.input.end() && is_output_item(*last)) ++last;
    // The resumed call is the turn's to answer whatever tool it named: an
    // MCP server's tool is not offered again before its server is back.
    auto names = st.client_tool_names;
    if (wire::decode_tool_call(*at, names).kind == wire::call_kind::unknown) {
      // By the name it is looked up by: a namespace tool's function flat.
      auto ns = at->value("namespace", std::string{});
      auto name = at->value("name", std::string{});
      names.insert(ns.empty() ? name : wire::flat_call_name(ns, name));
    }
    auto plan = plan_response(std::vector<json>(first, last), names);
    bool after = false;
    for (auto& p : plan.steps) {
      if (after) st.ready.push_back(std::move(p));
      if (p.call && p.call->call_id == ctx.resumed_call) {
        st.handed.push_back(std::move(p.call));
        after = true;
      }
    }
  }
  PARLEY_INFO("model event=resumed call={} found={} calls_left={}", ctx.resumed_call,
              !st.handed.empty(), st.ready.size());
  st.results_seen = ctx.step_results.empty() ? 0 : ctx.step_results.size() - 1;
  st.steered_seen = ctx.steered.size();  // in the stored history already
  take_results(self, ctx);
  answer_step(self);
}

/// The thread's earlier turns, from the store, then this turn's message.
void load_input(self_ptr self, const model_context& ctx) {
  auto& st = self->state;
  if (ctx.resumed) {
    self->request(st.store, std::chrono::seconds(30), atom::load::value, ctx.thread_id)
        .then(
            [self, ctx](stored_thread& t) { resume_input(self, ctx, store::model_history(t, "")); },
            [self, ctx](caf::error&) { resume_input(self, ctx, {}); });
    return;
  }
  auto begin = [self, text = ctx.user_text](std::vector<json> history) {
    auto& s = self->state;
    s.loaded = true;
    s.input = std::move(history);
    s.input.push_back(wire::user_message(text));
    s.recorded = s.input.size();
    answer_step(self);
  };
  self->request(st.store, std::chrono::seconds(30), atom::load::value, ctx.thread_id)
      .then(
          [begin, turn_id = ctx.turn_id](stored_thread& t) {
            begin(store::model_history(t, turn_id));
          },
          [begin](caf::error&) { begin({}); });  // nothing stored yet
}

// -- one attempt -------------------------------------------------------------

void arm_idle_check(self_ptr self) {
  auto timeout = self->state.setup->provider.stream_idle_timeout;
  self->delayed_send(self, timeout, idle_atom::value, self->state.attempt.number);
}

/// What a compaction sends: the history it summarises, then the request
/// for the summary.
std::vector<json> compaction_input(const http_model_state& st) {
  std::vector<json> out(st.input.begin(),
                        st.input.begin() + static_cast<std::ptrdiff_t>(st.compaction->keep_from));
  out.push_back(wire::user_message(wire::compaction_prompt()));
  return out;
}

void send_request(self_ptr self) {
  auto& st = self->state;
  auto& a = st.attempt;
  auto number = a.number + 1;
  a = attempt_state{};
  a.number = number;
  if (st.setup->provider.wire == model_config::wire_api::chat)
    a.stream.emplace<wire::chat_stream>();
  auto req = st.compaction
                 ? model_request::build(*st.setup, compaction_input(st), st.thread_id, false)
                 : model_request::build(*st.setup, st.input, st.thread_id, true, st.client_tools);
  st.requested = true;
  st.sent_headers = req.headers;
  a.last_bytes = clock_type::now();
  a.running = true;
  a.figures = attempt_figures(st.telemetry);
  a.figures.held(st.held);
  auto me = caf::actor_cast<http_model_actor>(self);
  a.request =
      st.setup->client->start(std::move(req), std::make_shared<relay>(me, number, a.window));
  // After the start, in the I/O thread's order: it starts held.
  if (st.held) st.setup->client->pause(a.request, true);
  PARLEY_DEBUG("model event=request provider={} attempt={} input_items={}",
               st.setup->provider.id, number, st.input.size());
  arm_idle_check(self);
}

/// Asks the model for a summary of input[0, keep_from) (a manual compaction
/// answers the step with it; an automatic one tells the turn, then goes on).
void start_compaction(self_ptr self, size_t keep_from, bool manual) {
  auto& st = self->state;
  st.compaction = compaction_state{keep_from, manual};
  PARLEY_INFO("model event=compacting provider={} manual={} items={} last_tokens={}",
              st.setup->provider.id, manual, keep_from, st.last_tokens);
  if (!manual) {
    model_notice n;
    n.compacting = true;
    self->send(st.turn, atom::notice::value, std::move(n));
  }
  send_request(self);
}

/// The summary came: the history is replaced by the compacted one.
void finish_compaction(self_ptr self, const std::vector<json>& output) {
  auto& st = self->state;
  auto how = *st.compaction;
  st.compaction.reset();
  compaction_result result;
  result.summary = wire::last_assistant_text(output);
  result.message = wire::summary_message_text(result.summary);
  std::vector<json> summarised(st.input.begin(),
                               st.input.begin() + static_cast<std::ptrdiff_t>(how.keep_from));
  result.replacement = wire::compacted_history(summarised, result.summary);
  for (size_t i = how.keep_from; i < st.input.size(); ++i)
    result.replacement.push_back(st.input[i]);
  st.input = result.replacement;
  st.recorded = st.input.size();  // the compaction record carries all of it
  st.last_tokens = 0;             // unknown until the next answer
  PARLEY_INFO("model event=compacted provider={} items={}", st.setup->provider.id, st.input.size());
  if (how.manual) {
    model_step done;
    done.compacted = std::move(result);
    return deliver(self, std::move(done));
  }
  model_notice n;
  n.compacted = std::move(result);
  self->send(st.turn, atom::notice::value, std::move(n));
  answer_step(self);
}

/// Another attempt after a pause, or the end of the turn's patience.
/// `stream_broke`: a stream that went silent or ended early (its own retry
/// budget); `ended`: how the attempt ended, for the figures.
void retry_or_fail(self_ptr self, const std::string& why, bool stream_broke, model_outcome ended) {
  auto& st = self->state;
  st.attempt.figures.end(ended);
  auto& used = stream_broke ? st.stream_retries : st.request_retries;
  auto limit = stream_broke ? st.setup->provider.stream_max_retries
                            : st.setup->provider.request_max_retries;
  if (st.attempt.running) st.setup->client->abort(st.attempt.request);
  st.attempt.running = false;
  if (used >= limit) return fail(self, why);
  ++used;
  if (st.telemetry)
    (stream_broke ? st.telemetry->model.stream_retries : st.telemetry->model.request_retries)
        .fetch_add(1, std::memory_order_relaxed);
  http::header_list headers;
  if (!st.attempt.retry_after.empty()) headers.emplace_back("retry-after", st.attempt.retry_after);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto wait = model_request::backoff(used, headers, unit(st.jitter));
  model_notice n;
  n.restart = true;
  n.retrying = http::redact(why, st.sent_headers) + "; retrying " + std::to_string(used) + "/"
               + std::to_string(limit) + " in " + std::to_string(wait.count()) + " ms";
  PARLEY_INFO("model event=retry provider={} reason=\"{}\"", st.setup->provider.id, n.retrying);
  self->send(st.turn, atom::notice::value, std::move(n));
  self->delayed_send(self, wait, retry_atom::value, st.attempt.number);
}

/// response.completed: the items become steps and join the input.
void on_completed(self_ptr self, const wire::response_completed& done) {
  auto& st = self->state;
  st.attempt.running = false;
  st.attempt.figures.end(model_outcome::completed);
  if (done.usage) st.last_tokens = done.usage->total_tokens;
  if (done.usage) {
    model_notice n;
    n.usage = protocol::token_breakdown{done.usage->total_tokens, done.usage->input_tokens,
                                        done.usage->cached_input_tokens, done.usage->output_tokens,
                                        done.usage->reasoning_output_tokens};
    self->send(st.turn, atom::notice::value, std::move(n));
  }
  st.request_retries = st.stream_retries = 0;
  if (st.compaction) return finish_compaction(self, st.attempt.output);
  auto plan = plan_response(st.attempt.output, st.client_tool_names);
  for (auto& item : st.attempt.output) st.input.push_back(std::move(item));
  for (auto& out : plan.immediate_outputs) st.input.push_back(std::move(out));
  for (auto& p : plan.steps) st.ready.push_back(std::move(p));
  st.answered = !plan.called_tools;
  st.request_retries = st.stream_retries = 0;
  answer_step(self);
}

/// A piece of the model's answer for its turn; none for any other event,
/// and none while the model writes a summary (not said to the user).
std::optional<model_delta> delta_of(self_ptr self, wire::stream_event& e) {
  auto& st = self->state;
  if (st.compaction) return std::nullopt;
  if (auto* d = std::get_if<wire::text_delta>(&e))
    return model_delta{std::move(d->item_id), std::move(d->delta), model_delta::kind::text, 0,
                       st.piece_credit};
  if (auto* r = std::get_if<wire::reasoning_delta>(&e)) {
    auto kind = r->summary ? model_delta::kind::reasoning_summary : model_delta::kind::reasoning_text;
    return model_delta{std::move(r->item_id), std::move(r->delta), kind, r->index,
                       st.piece_credit};
  }
  return std::nullopt;
}

/// One typed event of the stream. False once the stream has ended.
bool on_event(self_ptr self, wire::stream_event& e) {
  auto& st = self->state;
  // Pieces go to the turn through delta_of (handle_events); while a summary
  // is written they are not something the model says to the user.
  if (std::holds_alternative<wire::text_delta>(e)
      || std::holds_alternative<wire::reasoning_delta>(e)) {
    return true;
  } else if (auto* item = std::get_if<wire::output_item_done>(&e)) {
    st.attempt.output.push_back(std::move(item->item));
  } else if (auto* done = std::get_if<wire::response_completed>(&e)) {
    on_completed(self, *done);
    return false;
  } else if (auto* failed = std::get_if<wire::response_failed>(&e)) {
    st.setup->client->abort(st.attempt.request);
    st.attempt.running = false;
    st.attempt.figures.end(model_outcome::model_error);
    fail(self, "the model failed: " + failed->message);
    return false;
  } else if (auto* broken = std::get_if<wire::stream_error>(&e)) {
    st.setup->client->abort(st.attempt.request);
    st.attempt.running = false;
    st.attempt.figures.end(model_outcome::model_error);
    fail(self, "malformed model stream: " + broken->message);
    return false;
  }
  return true;
}

/// The events one read of the stream held. Pieces in a row go to the turn
/// as one message (what is at hand: nothing waits for more), in their
/// place among the other events.
void handle_events(self_ptr self, std::vector<wire::stream_event> events) {
  model_deltas run;
  run.reserve(events.size());  // once, not grown delta by delta
  auto flush = [&] {
    if (run.size() == 1)
      self->send(self->state.turn, atom::delta::value, std::move(run.front()));
    else if (!run.empty())
      self->send(self->state.turn, atom::delta::value, std::move(run));
    run.clear();
  };
  for (auto& e : events) {
    if (auto d = delta_of(self, e)) {
      run.push_back(std::move(*d));
      continue;
    }
    flush();
    if (!on_event(self, e)) return;
  }
  flush();
}

void on_body(self_ptr self, std::string& chunk) {
  auto& a = self->state.attempt;
  a.last_bytes = clock_type::now();
  a.figures.body_bytes();
  if (a.status != 200) {
    if (a.error_body.size() < 65536) a.error_body += chunk.substr(0, 65536 - a.error_body.size());
    return;
  }
  handle_events(self, std::visit([&](auto& s) { return s.feed(chunk); }, a.stream));
}

/// The transfer ended: a whole response, an HTTP error, or a broken stream.
void on_done(self_ptr self, bool ok, const std::string& message) {
  auto& st = self->state;
  auto& a = st.attempt;
  if (!a.running) return;  // the stream had ended already
  if (!ok) {
    // No status line: unreachable; one came: the response broke after it.
    auto how = a.status == 0     ? model_outcome::unreachable
               : a.status == 200 ? model_outcome::stream_broken
                                 : model_outcome::http_error;
    return retry_or_fail(self, "cannot reach the model: " + message, false, how);
  }
  if (a.status != 200) {
    auto why = model_request::status_message(a.status, a.error_body);
    if (model_request::retryable_status(a.status))
      return retry_or_fail(self, why, false, model_outcome::http_error);
    a.running = false;
    a.figures.end(model_outcome::http_error);
    return fail(self, why);
  }
  if (auto* chat = std::get_if<wire::chat_stream>(&a.stream)) {
    handle_events(self, chat->finish());
    if (!a.running) return;
  }
  retry_or_fail(self, "stream disconnected before completion", true,
                model_outcome::stream_broken);
}

/// Backpressure: hold the stream while a client is behind, read it again
/// once it has caught up (the idle timeout counts afresh from there).
void on_pressure(self_ptr self, bool hold) {
  auto& st = self->state;
  if (st.held == hold) return;
  st.held = hold;
  auto& a = st.attempt;
  PARLEY_DEBUG("model event=pressure provider={} attempt={} hold={}", st.setup->provider.id,
               a.number, hold);
  a.figures.held(hold);
  if (!hold && st.ask_when_caught_up) return ask_again(self);
  if (!a.running) return;
  st.setup->client->pause(a.request, hold);
  if (!hold) a.last_bytes = clock_type::now();
}

/// The client caught up after its held attempt was released: the request is
/// asked again, waiting its turn at the provider's cap like any other. Its
/// stream starts from the beginning; the turn shows the client only what it
/// has not seen (the restart notice, replay_cursor).
void ask_again(self_ptr self) {
  auto& st = self->state;
  st.ask_when_caught_up = false;
  if (st.promise) send_request(self);
}

/// The HTTP client cut the attempt: it was held longer than the provider's
/// stream_hold_release_ms while another request waited for its slot. Not
/// the model's failure: no retry budget is spent, and the client is not told.
void on_released(self_ptr self, uint64_t attempt) {
  auto& st = self->state;
  auto& a = st.attempt;
  if (attempt != a.number || !a.running) return;
  a.running = false;
  a.figures.end(model_outcome::released);
  if (st.telemetry) st.telemetry->model.held_retries.fetch_add(1, std::memory_order_relaxed);
  PARLEY_INFO("model event=retry provider={} attempt={} reason=held thread={} "
              "(its slot went to a waiting request; asked again once the client has caught up)",
              st.setup->provider.id, a.number, st.thread_id);
  model_notice n;
  n.restart = true;
  self->send(st.turn, atom::notice::value, std::move(n));
  st.ask_when_caught_up = true;
  if (!st.held) ask_again(self);  // it caught up meanwhile
}

void on_idle_check(self_ptr self, uint64_t attempt) {
  auto& st = self->state;
  if (attempt != st.attempt.number || !st.attempt.running) return;
  auto timeout = st.setup->provider.stream_idle_timeout;
  if (st.attempt.queued || st.held) {
    self->delayed_send(self, timeout, idle_atom::value, attempt);
    return;
  }
  auto silent = clock_type::now() - st.attempt.last_bytes;
  if (silent < timeout) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(timeout - silent);
    self->delayed_send(self, left, idle_atom::value, attempt);
    return;
  }
  retry_or_fail(self, "the model stream was idle for " + std::to_string(timeout.count()) + " ms",
                true, model_outcome::stream_broken);
}

caf::result<model_step> on_step(self_ptr self, const model_context& ctx) {
  auto& st = self->state;
  auto rp = self->make_response_promise<model_step>();
  if (st.promise) {  // one step at a time: a second ask is a bug upstream
    rp.deliver(make_error(errc::internal, "the model is already working on a step"));
    return rp;
  }
  st.promise = rp;
  st.thread_id = ctx.thread_id;
  st.client_tools = ctx.offered_tools;
  st.client_tool_names.clear();
  for (const auto& t : st.client_tools) {
    // A namespace tool's functions are called by their flat names
    // (wire::flat_call_name).
    if (t.value("type", "") == "namespace" && t.value("tools", nlohmann::json()).is_array()) {
      for (const auto& f : t["tools"])
        st.client_tool_names.insert(wire::flat_call_name(t.value("name", ""), f.value("name", "")));
      continue;
    }
    st.client_tool_names.insert(t.value("name", std::string{}));
  }
  if (!st.loaded) st.last_tokens = ctx.last_request_tokens;
  if (ctx.compact) {  // thread/compact/start: the history comes with the ask
    st.loaded = true;
    st.input = ctx.history;
    st.recorded = st.input.size();
    start_compaction(self, st.input.size(), true);
    return rp;
  }
  if (!st.loaded && !ctx.review_instructions.empty()) {
    // A review starts afresh: the reviewer's instructions and the review's
    // prompt, none of the thread's history (nor its compaction limit).
    st.loaded = true;
    st.review = true;
    st.last_tokens = 0;
    st.input = {json{{"type", "message"},
                     {"role", "developer"},
                     {"content", json::array({{{"type", "input_text"},
                                               {"text", ctx.review_instructions}}})}},
                wire::user_message(ctx.user_text)};
    st.recorded = st.input.size();
    answer_step(self);
    return rp;
  }
  if (!st.loaded && ctx.resumed) {
    load_input(self, ctx);  // takes the result once the turn's calls are known
    return rp;
  }
  take_results(self, ctx);
  take_steered(self, ctx);
  if (!st.loaded)
    load_input(self, ctx);
  else
    answer_step(self);
  return rp;
}

http_model_actor::behavior_type http_model(http_model_actor::stateful_pointer<http_model_state> self,
                                           std::shared_ptr<const provider_setup> setup,
                                           store_actor store, turn_actor turn,
                                           std::shared_ptr<runtime_telemetry> telemetry) {
  install_default_handlers(self, "http_model");
  self->state.telemetry = std::move(telemetry);
  self->state.setup = std::move(setup);
  self->state.store = std::move(store);
  self->state.turn = turn;
  // The turn's end (done, failed or interrupted) ends this model and its
  // request: the connection is closed, no more deltas.
  self->monitor(turn);
  self->set_down_handler([self](caf::down_msg&) { self->quit(); });
  return {
      [self](atom::step, const model_context& ctx) { return on_step(self, ctx); },
      [self](http_head_atom, uint64_t attempt, int status, std::string& retry_after) {
        if (attempt != self->state.attempt.number) return;
        self->state.attempt.status = status;
        self->state.attempt.retry_after = std::move(retry_after);
      },
      [self](http_body_atom, uint64_t attempt, const body_box_ptr& box) {
        auto chunk = box->take();
        auto& st = self->state;
        auto& a = st.attempt;
        if (attempt != a.number || chunk.empty()) return;  // an earlier attempt's: its transfer is gone
        // Its bytes count until the deltas made of it have reached every
        // client's queue (or nothing was made of it: at once).
        st.piece_credit =
            std::make_shared<chunk_credit>(a.window, st.setup->client, a.request, chunk.size());
        if (a.running) on_body(self, chunk);
        st.piece_credit.reset();
      },
      [self](http_done_atom, uint64_t attempt, bool ok, bool aborted, std::string& message) {
        if (attempt != self->state.attempt.number || aborted) return;
        on_done(self, ok, message);
      },
      [self](retry_atom, uint64_t attempt) {
        if (attempt == self->state.attempt.number && self->state.promise) send_request(self);
      },
      [self](idle_atom, uint64_t attempt) { on_idle_check(self, attempt); },
      [self](http_released_atom, uint64_t attempt) { on_released(self, attempt); },
      [self](atom::pressure, bool hold) { on_pressure(self, hold); },
      [self](http_admitted_atom, uint64_t attempt) {
        // The wait for the provider's cap is not the stream's silence.
        auto& a = self->state.attempt;
        if (attempt != a.number) return;
        a.queued = false;
        a.last_bytes = clock_type::now();
        a.figures.admitted();
      },
  };
}

}  // namespace

model_actor spawn_http_model(caf::actor_system& sys, std::shared_ptr<const provider_setup> setup,
                             store_actor store, turn_actor turn,
                             std::shared_ptr<runtime_telemetry> telemetry) {
  return caf::actor_cast<model_actor>(sys.spawn(http_model, std::move(setup), std::move(store),
                                                std::move(turn), std::move(telemetry)));
}

}  // namespace parley
