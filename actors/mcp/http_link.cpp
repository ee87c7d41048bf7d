#include "actors/mcp/http_link.hpp"

#include <caf/send.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/core/log.hpp"
#include "actors/mcp/messages.hpp"
#include "actors/model/wire/sse_parser.hpp"

namespace parley::mcp {

using json = nlohmann::json;

std::string origin_of(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  auto rest = url.substr(scheme_end + 3);
  auto authority = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  return url.substr(0, scheme_end + 3) + authority;
}

struct http_link::shared {
  std::mutex lock;
  caf::actor sink;
  uint64_t generation = 0;
  std::weak_ptr<http::client> client;
  // The session and the version initialize agreed to (empty until then).
  std::string session_id;
  std::string protocol_version;
  bool stopped = false;
  bool ended = false;  // gone or cut was told: nothing more is
  std::set<http::request_id> live;
  std::set<http::request_id> paused;  // waiting for the actor to catch up
  size_t unhandled = 0;
  // The GET stream: its state, where to resume it, the reconnection time
  // the server asked for, and the openings in a row that brought nothing.
  enum class stream_state { not_yet, open, waiting, refused, given_up };
  stream_state stream = stream_state::not_yet;
  std::string last_event_id;
  std::optional<long> retry_ms;
  int fruitless = 0;
  std::string name;  // the server's, for the log

  // Each under `lock`.
  void deliver(std::string line) {
    if (stopped || ended) return;
    unhandled += line.size() + 64;
    caf::anon_send(sink, atom::line::value, generation, std::move(line));
  }
  void gone(const std::string& how) {
    if (stopped || ended) return;
    ended = true;
    caf::anon_send(sink, atom::exited::value, generation, how);
  }
  void cut(const std::string& reason) {
    if (stopped || ended) return;
    ended = true;
    caf::anon_send(sink, atom::cut::value, generation, reason);
  }
  /// The GET stream ended or could not be had: asked for again after the
  /// server's reconnection time (1 s unless it said), doubled for each
  /// opening in a row that brought nothing, at most 30 s; after
  /// `max_fruitless` such openings, never again.
  void stream_ended(bool brought_events, const std::string& how) {
    if (stopped || ended) return;
    fruitless = brought_events ? 0 : fruitless + 1;
    if (fruitless >= http_link::max_fruitless_streams) {
      stream = stream_state::given_up;
      PARLEY_WARN("mcp event=get_stream_given_up server={} how=\"{}\" tries={}", name, how, fruitless);
      return;
    }
    stream = stream_state::waiting;
    long delay = std::clamp<long>(retry_ms.value_or(1000), 100, 30'000);
    for (int i = 1; i < fruitless && delay < 30'000; ++i) delay = std::min<long>(delay * 2, 30'000);
    PARLEY_INFO("mcp event=get_stream_ended server={} how=\"{}\" resume_in_ms={} last_event_id=\"{}\"",
                name, how, delay, last_event_id);
    caf::delayed_anon_send(sink, std::chrono::milliseconds(delay), atom::reopen::value, generation);
  }
};

namespace {

std::string error_line(const json& id, const std::string& message) {
  json e = {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", -32603}, {"message", message}}}};
  return e.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// What a POST's and the GET stream's sinks share: the request's id, the
/// pause past max_unhandled_bytes, and the bookkeeping when it ends.
class link_sink : public http::sink {
 public:
  explicit link_sink(std::shared_ptr<http_link::shared> sh) : sh_(std::move(sh)) {}

  std::atomic<http::request_id> rid{0};
  bool done = false;  // under sh_->lock

  bool ready() override {
    std::lock_guard<std::mutex> guard{sh_->lock};
    if (sh_->unhandled <= http_link::max_unhandled_bytes || rid.load() == 0) return true;
    sh_->paused.insert(rid.load());
    return false;
  }

 protected:
  /// Under sh_->lock, when the request ends: false when nothing more is to
  /// be done with its outcome (the link stopped, or parley aborted it).
  bool settle(const http::outcome& result) {
    done = true;
    sh_->live.erase(rid.load());
    sh_->paused.erase(rid.load());
    return !sh_->stopped && !result.aborted();
  }

  std::shared_ptr<http_link::shared> sh_;
};

/// Hears one POST's answer.
class message_sink final : public link_sink {
 public:
  message_sink(std::shared_ptr<http_link::shared> sh, json id, bool initialize, std::string origin)
      : link_sink(std::move(sh)), id_(std::move(id)), initialize_(initialize),
        origin_(std::move(origin)) {}

  void on_status(int status, const http::header_list& headers) override {
    status_ = status;
    if (auto* type = http::find_header(headers, "content-type"))
      event_stream_ = type->find("text/event-stream") != std::string::npos;
    if (initialize_ && status >= 200 && status < 300)
      if (auto* session = http::find_header(headers, "mcp-session-id")) {
        std::lock_guard<std::mutex> guard{sh_->lock};
        sh_->session_id = *session;
      }
  }

  void on_body(std::string_view chunk) override {
    if (status_ < 200 || status_ >= 300) {
      if (error_text_.size() < 300) error_text_.append(chunk.substr(0, 300 - error_text_.size()));
      return;
    }
    if (!event_stream_) {
      if (body_.size() + chunk.size() > http_link::max_message_bytes) {
        std::lock_guard<std::mutex> guard{sh_->lock};
        return sh_->cut("sent a message longer than 16 MiB");
      }
      body_.append(chunk);
      return;
    }
    auto events = parser_.feed(chunk);
    std::lock_guard<std::mutex> guard{sh_->lock};
    if (parser_.error()) return sh_->cut("sent an event longer than 16 MiB");
    for (auto& e : events)
      if (e.event.empty() || e.event == "message") take(std::move(e.data));
  }

  void on_done(const http::outcome& result) override {
    std::lock_guard<std::mutex> guard{sh_->lock};
    if (!settle(result)) return;
    // Unreachable, or the connection broke mid-answer: the server is gone
    // as a process that died is (its calls fail, it is started again).
    if (!result.ok()) return sh_->gone("cannot reach " + origin_ + ": " + result.message);
    if (!initialize_ && !sh_->session_id.empty() && session_lost())
      return sh_->gone("ended its session (HTTP " + std::to_string(status_)
                       + "); starting a new one");
    if (status_ < 200 || status_ >= 300) {
      auto text = "HTTP " + std::to_string(status_);
      if (!error_text_.empty()) text += ": " + error_text_;
      return fail(text);
    }
    if (!event_stream_ && !body_.empty()) {
      auto parsed = json::parse(body_, nullptr, false);
      if (parsed.is_array()) {
        for (auto& m : parsed) take(m.dump(-1, ' ', false, json::error_handler_t::replace));
      } else if (!parsed.is_discarded()) {
        take(parsed.dump(-1, ' ', false, json::error_handler_t::replace));
      } else {
        // Not JSON: the actor judges the line and cuts the server off.
        std::string line = body_;
        for (auto& c : line)
          if (c == '\n' || c == '\r') c = ' ';
        sh_->deliver(std::move(line));
        return;
      }
    }
    if (!id_.is_null() && !answered_)
      fail(event_stream_ ? "its event stream ended before the answer"
                         : "answered HTTP " + std::to_string(status_) + " without a message");
  }

 private:
  // Under sh_->lock.
  void take(std::string data) {
    // An event's data lines are joined by \n: whitespace between JSON's
    // tokens (a string cannot hold a raw newline).
    for (auto& c : data)
      if (c == '\n' || c == '\r') c = ' ';
    auto m = json::parse(data, nullptr, false);
    if (m.is_object() && !m.contains("method") && m.contains("id") && m["id"] == id_) {
      answered_ = true;
      if (initialize_ && m.contains("result") && m["result"].is_object()) {
        auto v = m["result"].find("protocolVersion");
        if (v != m["result"].end() && v->is_string()) sh_->protocol_version = v->get<std::string>();
      }
    }
    sh_->deliver(std::move(data));
  }

  // The server no longer knows our session: 404, as the specification says,
  // or 400 naming the session, as servers built on the reference SDK's
  // example answer after they restarted.
  bool session_lost() const {
    if (status_ == 404) return true;
    if (status_ != 400) return false;
    std::string lower = error_text_;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower.find("session") != std::string::npos;
  }

  // Under sh_->lock: this request did not get its answer.
  void fail(const std::string& why) {
    if (initialize_) return sh_->gone(why);
    if (!id_.is_null() && !answered_) sh_->deliver(error_line(id_, why));
  }

  json id_;
  bool initialize_;
  std::string origin_;
  int status_ = 0;
  bool event_stream_ = false;
  bool answered_ = false;
  std::string body_;
  std::string error_text_;
  wire::sse_parser parser_{http_link::max_message_bytes};
};

/// Hears the GET stream: the server's own requests and notifications
/// (answers to requests whose POST stream broke, too), bounded as a POST's
/// event stream is. 405: the server offers none, never asked again.
class stream_sink final : public link_sink {
 public:
  explicit stream_sink(std::shared_ptr<http_link::shared> sh) : link_sink(std::move(sh)) {}

  void on_status(int status, const http::header_list& headers) override {
    status_ = status;
    if (auto* type = http::find_header(headers, "content-type"))
      event_stream_ = type->find("text/event-stream") != std::string::npos;
  }

  void on_body(std::string_view chunk) override {
    if (status_ < 200 || status_ >= 300 || !event_stream_) return;
    auto events = parser_.feed(chunk);
    std::lock_guard<std::mutex> guard{sh_->lock};
    if (parser_.error()) return sh_->cut("sent an event longer than 16 MiB on its GET stream");
    if (!parser_.last_event_id().empty()) sh_->last_event_id = parser_.last_event_id();
    if (parser_.retry_ms()) sh_->retry_ms = parser_.retry_ms();
    for (auto& e : events) {
      if (!e.event.empty() && e.event != "message") continue;
      for (auto& c : e.data)
        if (c == '\n' || c == '\r') c = ' ';
      brought_ = true;
      sh_->deliver(std::move(e.data));
    }
  }

  void on_done(const http::outcome& result) override {
    std::lock_guard<std::mutex> guard{sh_->lock};
    if (!settle(result)) return;
    if (status_ == 405) {
      sh_->stream = http_link::shared::stream_state::refused;
      PARLEY_INFO("mcp event=get_stream_not_offered server={} status=405", sh_->name);
      return;
    }
    std::string how = !result.ok()                       ? result.message
                      : status_ < 200 || status_ >= 300 ? "HTTP " + std::to_string(status_)
                      : !event_stream_                   ? "not an event stream"
                                                         : "ended by the server";
    sh_->stream_ended(brought_, how);
  }

 private:
  int status_ = 0;
  bool event_stream_ = false;
  bool brought_ = false;
  wire::sse_parser parser_{http_link::max_message_bytes};
};

}  // namespace

http_link::http_link(http_spec spec, std::shared_ptr<http::client> client, caf::actor sink,
                     uint64_t generation)
    : spec_(std::move(spec)), client_(std::move(client)), shared_(std::make_shared<shared>()) {
  shared_->sink = std::move(sink);
  shared_->generation = generation;
  shared_->client = client_;
  shared_->name = spec_.name;
}

http_link::~http_link() {
  std::vector<http::request_id> live;
  {
    std::lock_guard<std::mutex> guard{shared_->lock};
    shared_->stopped = true;
    live.assign(shared_->live.begin(), shared_->live.end());
  }
  for (auto id : live) client_->abort(id);
}

bool http_link::send(std::string line) {
  auto m = json::parse(line, nullptr, false);
  json id;
  bool initialize = false;
  bool initialized = false;
  if (m.is_object()) {
    initialize = m.value("method", "") == "initialize";
    initialized = m.value("method", "") == "notifications/initialized" && !m.contains("id");
    if (m.contains("method") && m.contains("id")) id = m["id"];
  }
  http::request req;
  req.method = http::verb::post;
  req.url = spec_.url;
  req.connect_timeout_ms = spec_.connect_timeout_ms;
  req.headers = {{"Content-Type", "application/json"},
                 {"Accept", "application/json, text/event-stream"}};
  {
    std::lock_guard<std::mutex> guard{shared_->lock};
    if (shared_->live.size() >= max_in_flight) return false;
    if (initialize) {
      shared_->session_id.clear();
      shared_->protocol_version.clear();
    }
    if (!shared_->protocol_version.empty())
      req.headers.emplace_back("MCP-Protocol-Version", shared_->protocol_version);
    if (!shared_->session_id.empty()) req.headers.emplace_back("Mcp-Session-Id", shared_->session_id);
  }
  req.headers.insert(req.headers.end(), spec_.headers.begin(), spec_.headers.end());
  req.body = std::move(line);
  auto sink = std::make_shared<message_sink>(shared_, std::move(id), initialize, origin_of(spec_.url));
  // Not under the lock: a client already shut down calls on_done here.
  auto rid = client_->start(std::move(req), sink);
  sink->rid = rid;
  {
    std::lock_guard<std::mutex> guard{shared_->lock};
    if (!sink->done) shared_->live.insert(rid);
  }
  // Initialized: the server may now send on a stream of its own.
  if (initialized) open_stream();
  return true;
}

void http_link::reopen() { open_stream(); }

void http_link::open_stream() {
  using state = shared::stream_state;
  http::request req;
  req.method = http::verb::get;
  req.url = spec_.url;
  req.connect_timeout_ms = spec_.connect_timeout_ms;
  req.headers = {{"Accept", "text/event-stream"}};
  {
    std::lock_guard<std::mutex> guard{shared_->lock};
    if (shared_->stopped || shared_->ended || shared_->stream == state::open
        || shared_->stream == state::refused || shared_->stream == state::given_up)
      return;
    if (shared_->live.size() >= max_in_flight) return shared_->stream_ended(false, "too many transfers");
    shared_->stream = state::open;
    if (!shared_->protocol_version.empty())
      req.headers.emplace_back("MCP-Protocol-Version", shared_->protocol_version);
    if (!shared_->session_id.empty()) req.headers.emplace_back("Mcp-Session-Id", shared_->session_id);
    if (!shared_->last_event_id.empty()) req.headers.emplace_back("Last-Event-ID", shared_->last_event_id);
  }
  req.headers.insert(req.headers.end(), spec_.headers.begin(), spec_.headers.end());
  auto sink = std::make_shared<stream_sink>(shared_);
  auto rid = client_->start(std::move(req), sink);
  sink->rid = rid;
  std::lock_guard<std::mutex> guard{shared_->lock};
  if (!sink->done) shared_->live.insert(rid);
}

void http_link::consumed(size_t bytes) {
  std::vector<http::request_id> resume;
  {
    std::lock_guard<std::mutex> guard{shared_->lock};
    auto n = bytes + 64;
    shared_->unhandled = shared_->unhandled > n ? shared_->unhandled - n : 0;
    if (shared_->unhandled > max_unhandled_bytes / 2 || shared_->paused.empty()) return;
    resume.assign(shared_->paused.begin(), shared_->paused.end());
    shared_->paused.clear();
  }
  for (auto id : resume) client_->flow(id);
}

std::string http_link::describe() const { return "url=" + origin_of(spec_.url); }

}  // namespace parley::mcp
