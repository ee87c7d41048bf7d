#include "transport/ws_server.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "actors/runtime/express_queue.hpp"
#include "actors/runtime/lazy_clock_scheduler.hpp"
#include "actors/runtime/runtime.hpp"
#include "protocol/ids.hpp"
#include "protocol/jsonrpc.hpp"
#include "transport/connection.hpp"
#include "transport/frame_outbox.hpp"
#include "transport/line_reader.hpp"
#include "transport/metrics.hpp"
#include "transport/metrics_text.hpp"
#include "transport/outgoing_queue.hpp"
#include "transport/tls_context.hpp"
#include "transport/unix_socket_claim.hpp"
#include "transport/ws_corked_stream.hpp"

namespace parley::ws {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;
namespace ssl = asio::ssl;
/// A wss:// connection: TLS over TCP, under the WebSocket.
using tls_socket = beast::ssl_stream<tcp::socket>;
template <class Stream>
constexpr bool is_tls = std::is_same_v<Stream, tls_socket>;

namespace {

/// The writer a connection actor writes its lines to: each line becomes one
/// text frame, queued on the I/O thread.
struct frame_writer_state {
  static inline const char* name = "ws_writer";
  std::function<void(std::string, std::shared_ptr<const void>)> send;
  std::function<void()> close;
};

line_writer_actor::behavior_type frame_writer(
    line_writer_actor::stateful_pointer<frame_writer_state> self,
    std::function<void(std::string, std::shared_ptr<const void>)> send,
    std::function<void()> close) {
  install_default_handlers(self, "ws_writer");
  self->state.send = std::move(send);
  self->state.close = std::move(close);
  return {
      [self](std::string& line) { self->state.send(std::move(line), nullptr); },
      [self](std::string& line, std::shared_ptr<const void>& credit) {
        self->state.send(std::move(line), std::move(credit));
      },
      [](atom::flush) {},
      [self](atom::close) {
        self->state.close();
        self->quit();
        return atom::ok::value;
      },
  };
}

}  // namespace

/// Asio opens sockets without close-on-exec: a command started while one is
/// open would inherit it, keep a listening socket accepting into a backlog
/// nobody reads after the listener closed (the drain), and hold a client's
/// connection open after parley closed it.
static void close_on_exec(int fd) {
  int flags = ::fcntl(fd, F_GETFD);
  if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

/// What every session shares: the runtime, the limits, the live sessions and
/// connections, and the I/O context. Held by shared_ptr: a connection's writer
/// may post its last frame after the server is gone (into a stopped context),
/// so it keeps all of this alive rather than point at freed memory.
struct shared : std::enable_shared_from_this<shared> {
  shared(runtime& r, server_options o)
      : rt(r), options(std::move(o)), telemetry(r.telemetry()) {}

  runtime& rt;
  server_options options;
  /// Where connections, queued bytes and refusals are counted (/metrics).
  std::shared_ptr<runtime_telemetry> telemetry;
  std::mutex mtx;
  /// How to close each live session at shutdown; a session leaves when its
  /// client does.
  std::map<uint64_t, std::function<void()>> sessions;
  /// Every connection actor still running (it leaves when it terminates):
  /// shutdown waits for them.
  std::map<uint64_t, connection_actor> connections;
  uint64_t next_id = 0;
  /// The connection caps (I/O thread only).
  connection_caps caps{options.caps};
  /// Refusals by cap, and deadlines run out, since start.
  std::atomic<uint64_t> refused_connections{0};
  std::atomic<uint64_t> refused_pending{0};
  std::atomic<uint64_t> refused_per_address{0};
  std::atomic<uint64_t> deadlines{0};
  /// What new wss:// connections are made with (I/O thread only; a reload
  /// replaces it, a connection keeps the one it started with).
  std::shared_ptr<ssl::context> tls;
  // Last: destroyed first, with the sessions its pending handlers still hold
  // (they leave `sessions` as they go).
  asio::io_context ioc;
};

/// A burst written in one write holds at most this many messages and bytes
/// (a larger message goes alone).
constexpr size_t kBurstMessages = 128;
constexpr size_t kBurstBytes = size_t{64} << 10;

/// One client: the HTTP request (a health check, or the upgrade), then
/// frames both ways. Lives on the I/O thread; the connection actor reaches it
/// only through posted work. Counted by the caps from its accept to its end.
template <class Stream>
class session : public std::enable_shared_from_this<session<Stream>> {
 public:
  /// `address`: the peer's address for the per-address cap (empty: none);
  /// `tls`: the context of a wss:// connection; `args` make the stream.
  template <class... Args>
  session(shared& owner, std::string peer, std::string address,
          std::shared_ptr<ssl::context> tls, Args&&... args)
      : tls_(std::move(tls)),
        ws_(std::forward<Args>(args)...),
        deadline_(owner.ioc),
        owner_(owner),
        peer_(std::move(peer)),
        address_(std::move(address)) {
    owner_.telemetry->connections.open.fetch_add(1, std::memory_order_relaxed);
  }

  ~session() {
    owner_.caps.left(address_, upgraded_);
    auto& figures = owner_.telemetry->connections;
    figures.open.fetch_sub(1, std::memory_order_relaxed);
    if (upgraded_) figures.sessions.fetch_sub(1, std::memory_order_relaxed);
    figures.queued_bytes.fetch_sub(accounted_bytes_, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock{owner_.mtx};
    owner_.sessions.erase(id_);
  }

  void start() {
    auto self = this->shared_from_this();
    {
      std::lock_guard<std::mutex> lock{owner_.mtx};
      id_ = ++owner_.next_id;
      std::weak_ptr<session> weak = self;
      owner_.sessions[id_] = [weak] {
        if (auto s = weak.lock()) s->abort();
      };
    }
    if constexpr (is_tls<Stream>) {
      // A cleartext client on a TLS port fails here and gets nothing.
      arm_deadline("tls_handshake");
      auto& secure = ws_.next_layer().next_layer();  // under the corked layer
      secure.async_handshake(ssl::stream_base::server, [self](beast::error_code ec) {
        if (ec) {
          PARLEY_DEBUG("ws event=tls_handshake_failed peer={} error=\"{}\"", self->peer_,
                       ec.message());
          return;
        }
        self->read_request();
      });
    } else {
      read_request();
    }
  }

 private:
  std::string name() const { return "ws#" + std::to_string(id_) + " " + peer_; }

  /// Every phase before the WebSocket session has this deadline; past it the
  /// socket is closed (and the pending operation ends with the session).
  void arm_deadline(const char* phase) {
    phase_ = phase;
    deadline_.expires_after(owner_.options.handshake_timeout);
    std::weak_ptr<session> weak = this->shared_from_this();
    deadline_.async_wait([weak](beast::error_code ec) {
      if (ec) return;  // cancelled: the phase completed
      if (auto s = weak.lock()) s->on_deadline();
    });
  }

  void on_deadline() {
    owner_.deadlines.fetch_add(1, std::memory_order_relaxed);
    // Debug only: a flood of half-open connections must not flood the log.
    PARLEY_DEBUG("ws event=deadline peer={} phase={} closing", peer_, phase_);
    abort();
  }

  /// The request before any upgrade: its headers (and a small body, which
  /// none of ours has) must be complete within the deadline.
  void read_request() {
    arm_deadline("request");
    parser_.emplace();
    parser_->header_limit(16 * 1024);
    parser_->body_limit(64 * 1024);
    auto self = this->shared_from_this();
    http::async_read(ws_.next_layer(), buffer_, *parser_,
                     [self](beast::error_code ec, size_t) { self->on_request(ec); });
  }

  void on_request(beast::error_code ec) {
    if (ec) return;
    request_ = parser_->release();
    parser_.reset();
    if (request_.find(http::field::origin) != request_.end())
      return refuse(http::status::forbidden, "origin", "requests from a browser are refused");
    if (!websocket::is_upgrade(request_) || owner_.options.plain_http_only)
      return answer_plain();
    auto authorization = request_.find(http::field::authorization);
    std::string_view bearer;
    if (authorization != request_.end())
      bearer = std::string_view(authorization->value().data(), authorization->value().size());
    auto why = ws::authenticate(owner_.options.auth, bearer, protocol::unix_seconds(), who_);
    if (why) return refuse(http::status::unauthorized, why->c_str(), "unauthorized");
    // A Unix socket's peer is the local operator (its file is 0600), one
    // tenant whatever its token says.
    if (address_.empty()) who_ = owner_.options.local;
    ws_.read_message_max(owner_.options.max_message_bytes);
    // Codex's 101 names the largest message it takes; clients size their
    // frames by it.
    ws_.set_option(websocket::stream_base::decorator(
        [max = owner_.options.max_message_bytes](websocket::response_type& res) {
          res.set("x-codex-websocket-max-unfragmented-message-bytes", std::to_string(max));
        }));
    // Chosen here rather than taken from timeout::suggested(server) (30 s
    // handshake, 300 s idle with pings in Boost 1.74): the handshake has the
    // same deadline as the request before it, and a silent peer (a laptop
    // that slept, a half-open TCP connection) is pinged after half the idle
    // timeout and closed at its end when nothing came back; any frame from
    // the peer, a pong included, counts as heard.
    websocket::stream_base::timeout timeouts;
    timeouts.handshake_timeout = owner_.options.handshake_timeout;
    timeouts.idle_timeout = owner_.options.idle_timeout;
    timeouts.keep_alive_pings = true;
    ws_.set_option(timeouts);
    deadline_.cancel();  // the WebSocket stream's own handshake timeout from here
    phase_ = "websocket_handshake";
    auto self = this->shared_from_this();
    ws_.async_accept(request_, [self](beast::error_code e) { self->on_accept(e); });
  }

  /// Plain HTTP on the listener: health checks answer 200, anything else 404.
  void answer_plain() {
    auto target = std::string(request_.target());
    bool get = request_.method() == http::verb::get;
    if (get && target == "/healthz") return respond(http::status::ok, "ok\n");
    if (get && target == "/metrics")
      return respond(http::status::ok, render_metrics(*owner_.telemetry), metrics::content_type);
    if (get && target == "/readyz") {
      // Not ready while the store cannot write: new threads and turns would
      // be refused.
      auto& health = owner_.rt.telemetry()->store;
      if (owner_.telemetry->draining.load(std::memory_order_acquire))
        return respond(http::status::service_unavailable,
                       "not ready: the server is shutting down (draining)\n");
      if (health.writable()) return respond(http::status::ok, "ok\n");
      return respond(http::status::service_unavailable,
                     "not ready: the store cannot write (" + health.fault() + ")\n");
    }
    respond(http::status::not_found, "not found\n");
  }

  void refuse(http::status status, const char* reason, const char* body) {
    PARLEY_WARN("ws event=handshake_refused peer={} reason=\"{}\"", peer_, reason);
    respond(status, std::string(body) + "\n");
  }

  /// A plain answer, written within the deadline (a client that does not
  /// read it holds nothing longer), then the connection ends.
  void respond(http::status status, std::string body, const char* type = "text/plain") {
    arm_deadline("answer");
    auto res = std::make_shared<http::response<http::string_body>>(status, request_.version());
    res->set(http::field::content_type, type);
    res->keep_alive(false);
    res->body() = std::move(body);
    res->prepare_payload();
    auto self = this->shared_from_this();
    http::async_write(ws_.next_layer(), *res, [self, res](beast::error_code, size_t) {
      self->deadline_.cancel();
      beast::error_code ignored;
      beast::get_lowest_layer(self->ws_).shutdown(asio::socket_base::shutdown_both, ignored);
    });
  }

  void on_accept(beast::error_code ec) {
    if (ec) return;
    upgraded_ = true;
    owner_.caps.upgraded(address_);
    owner_.telemetry->connections.sessions.fetch_add(1, std::memory_order_relaxed);
    auto& rt = owner_.rt;
    std::weak_ptr<session> weak = this->shared_from_this();
    auto keep = owner_.shared_from_this();
    // The connection's lines go to this I/O thread straight from its actor
    // (connection_options::write_direct), a burst of them in one handler.
    auto box = std::make_shared<frame_outbox>();
    auto write_direct = [weak, keep, box](std::string line, std::shared_ptr<const void> credit) {
      if (!box->put(std::move(line), std::move(credit))) return;  // a drain is on its way
      asio::post(keep->ioc, [weak, box] {
        auto lines = box->take();
        if (auto s = weak.lock()) s->send_all(lines);
        // The credits are given back here, once their lines are queued.
      });
    };
    // The writer only closes the output now, once every line before has
    // been handed over (and so posted ahead of its close).
    auto writer = rt.system().spawn(
        frame_writer, write_direct,
        [weak, keep] {
          asio::post(keep->ioc, [weak] {
            if (auto s = weak.lock()) s->close_when_drained();
          });
        });
    connection_options options;
    options.config = rt.shared_config();
    options.telemetry = rt.telemetry();
    options.cluster_router = rt.thread_router();
    options.shutdown_on_close = false;  // other clients stay
    options.label = name();
    options.identity = who_;
    options.mcp_hub = rt.mcp_hub();
    options.write_direct = write_direct;
    PARLEY_INFO("ws event=session connection={} tenant={} subject=\"{}\"{}", options.label,
                who_.tenant, who_.subject, who_.is_operator ? " operator=true" : "");
    conn_ = rt.system().spawn(connection, rt.threads(), writer, options);
    {
      std::lock_guard<std::mutex> lock{owner_.mtx};
      owner_.connections[id_] = conn_;
    }
    // Leaves the table when it terminates, whenever that is.
    std::weak_ptr<shared> table = keep;
    caf::actor_cast<caf::abstract_actor*>(conn_)->attach_functor([table, id = id_] {
      if (auto t = table.lock()) {
        std::lock_guard<std::mutex> lock{t->mtx};
        t->connections.erase(id);
      }
    });
    PARLEY_INFO("ws event=connected client={}", name());
    read();
  }

  void read() {
    auto self = this->shared_from_this();
    ws_.async_read(buffer_, [self](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) return closed(ec.message());
    if (!ws_.got_text()) {
      PARLEY_WARN("ws event=binary_frame client={} closing", name());
      return close(websocket::close_code::unknown_data);
    }
    auto line = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    if (auto refused = queue_.refusal(line)) {
      PARLEY_WARN("ws event=overloaded client={} queued_bytes={} request refused", name(),
                  queue_.bytes());
      owner_.telemetry->limits.count("client_queue_full");
      send(std::move(*refused));
      return read();
    }
    bool answer = looks_like_reply(line);
    send_line(conn_, std::move(line));
    // A connection with events to write is already queued, so the send above
    // did not wake it into the express lane: it is moved there, or the answer
    // would wait behind every job queued before it (issue 23: two answers in
    // three, p50 ~40 ms at load 8).
    if (answer)
      move_to_express_lane(owner_.rt.system(), caf::actor_cast<caf::abstract_actor*>(conn_));
    read();
  }

  /// The client is gone (or was closed): its session ends like stdin's EOF.
  void closed(const std::string& why) {
    if (eof_sent_) return;
    eof_sent_ = true;
    PARLEY_INFO("ws event=disconnected client={} reason=\"{}\"", name(), why);
    if (conn_ && !gave_up_) caf::anon_send(conn_, atom::eof::value);
  }

  void send(std::string line) {
    if (closing_ || !queue(std::move(line))) return;
    account_queued_bytes();
    signal_pressure();
    if (!writing_) write_next();
  }

  /// The lines a drain took, in order: queued one by one (each is its own
  /// message), the queue's bytes accounted and its pressure looked at once.
  void send_all(std::vector<frame_outbox::entry>& lines) {
    if (closing_) return;
    bool fits = true;
    for (auto& entry : lines)
      if (!(fits = queue(std::move(entry.first)))) break;
    account_queued_bytes();
    signal_pressure();
    if (fits && !writing_) write_next();
  }

  /// Queues one line; false (and the client closed) when it does not fit.
  bool queue(std::string line) {
    if (queue_.push(std::move(line))) return true;
    PARLEY_WARN("ws event=slow_client client={} queued_bytes={} disconnecting", name(),
                queue_.bytes());
    owner_.telemetry->limits.count("slow_client");
    // Given up, not gone of its own accord: what it sent and is not yet run
    // is dropped (the connection's on_given_up), then the close.
    if (conn_ && !eof_sent_ && !gave_up_)
      caf::anon_send(conn_, atom::eof::value, atom::gone::value);
    gave_up_ = true;
    close(websocket::close_code::try_again_later);
    return false;
  }

  /// Past the queue's high-water mark the connection holds its threads'
  /// model streams, below the low-water mark it lets them go (issue 22).
  void signal_pressure() {
    auto change = queue_.pressure_change();
    if (!change || !conn_) return;
    PARLEY_DEBUG("ws event=pressure client={} on={} queued_bytes={}", name(), *change,
                 queue_.bytes());
    caf::anon_send<caf::message_priority::high>(conn_, atom::pressure::value, *change);
  }

  /// Writes the queue's front lines, each its own message, as one burst: all
  /// but the last are kept by the corked layer under Beast (ws_corked_stream.hpp)
  /// and go to the socket with the last, in one write. The lines leave the
  /// queue (and its bytes the pressure marks) once that write is done.
  void write_next() {
    writing_ = true;
    size_t count = 1;
    size_t bytes = queue_.front().size();
    while (count < queue_.size() && count < kBurstMessages &&
           bytes + queue_.at(count).size() <= kBurstBytes)
      bytes += queue_.at(count++).size();
    burst_ = count;
    write_message(0);
  }

  void write_message(size_t i) {
    bool last = i + 1 == burst_;
    ws_.next_layer().cork(!last);
    ws_.text(true);
    auto self = this->shared_from_this();
    ws_.async_write(asio::buffer(queue_.at(i)), [self, i, last](beast::error_code ec, size_t) {
      if (!ec && !last && !self->closing_) return self->write_message(i + 1);
      // The burst is over: written, failed, or cut short by a close (whose
      // frame, written uncorked, takes what was kept with it).
      self->ws_.next_layer().cork(false);
      for (size_t n = 0; n <= i; ++n) self->queue_.pop();
      self->account_queued_bytes();
      self->signal_pressure();
      self->writing_ = false;
      if (ec) return self->closed(ec.message());
      if (self->closing_) return;  // nothing goes after the close frame
      if (!self->queue_.empty()) return self->write_next();
      if (self->close_after_drain_) self->close(websocket::close_code::normal);
    });
  }

  /// The queue's size into the listeners' total (by difference: one atomic
  /// add per change, no walk over every connection when /metrics asks).
  void account_queued_bytes() {
    auto now = static_cast<int64_t>(queue_.bytes());
    owner_.telemetry->connections.queued_bytes.fetch_add(now - accounted_bytes_,
                                                         std::memory_order_relaxed);
    accounted_bytes_ = now;
  }

  /// The connection is done (its session ended): say goodbye once written.
  void close_when_drained() {
    if (writing_ || !queue_.empty()) {
      close_after_drain_ = true;
      return;
    }
    close(websocket::close_code::normal);
  }

  void close(websocket::close_code code) {
    if (closing_) return;
    closing_ = true;
    // The close frame is written uncorked: it takes a burst cut short with it.
    ws_.next_layer().cork(false);
    auto self = this->shared_from_this();
    ws_.async_close(code, [self](beast::error_code) { self->closed("closed by the server"); });
  }

  /// Shutdown: drop the socket; the pending read ends and the session with it.
  void abort() {
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).close(ignored);
  }

  std::shared_ptr<ssl::context> tls_;  // before ws_: its stream uses it
  websocket::stream<corked_stream<Stream>> ws_;
  asio::steady_timer deadline_;
  shared& owner_;
  std::string peer_;
  std::string address_;
  bool upgraded_ = false;
  const char* phase_ = "request";
  uint64_t id_ = 0;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  connection_actor conn_;
  outgoing_queue queue_{owner_.options.max_queued_bytes};
  bool writing_ = false;
  size_t burst_ = 0;  // the messages of the burst being written
  bool closing_ = false;
  tenant_identity who_;  // from its credentials, at the handshake
  bool close_after_drain_ = false;
  bool eof_sent_ = false;
  bool gave_up_ = false;  // the connection was told it was given up on (queue())
  int64_t accounted_bytes_ = 0;  // this queue's part of connections.queued_bytes
};

struct server::impl {
  impl(runtime& rt, server_options options)
      : owned(std::make_shared<shared>(rt, std::move(options))), state(*owned), ioc(owned->ioc) {}

  template <class Acceptor, class Socket>
  void accept(Acceptor& acceptor, bool tls = false) {
    acceptor.async_accept([this, &acceptor, tls](beast::error_code ec, Socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;  // shutdown
      if (ec) {
        // Out of descriptors, say: keep the listener, try again shortly.
        PARLEY_WARN("ws event=accept_failed error=\"{}\" retrying", ec.message());
        auto timer = std::make_shared<asio::steady_timer>(ioc, std::chrono::milliseconds(100));
        timer->async_wait(
            [this, &acceptor, timer, tls](beast::error_code) {
              accept<Acceptor, Socket>(acceptor, tls);
            });
        return;
      }
      std::string peer = "unix";
      std::string address;  // Unix socket peers share no per-address cap
      if constexpr (std::is_same_v<Socket, tcp::socket>) {
        beast::error_code e;
        // Every message is a small frame that someone waits on (an answer, an
        // approval's resolution): with Nagle's algorithm a frame sent while
        // the previous one is unacknowledged waits for the peer's delayed ACK
        // (40 ms on Linux), and each exchange of a turn paid it.
        socket.set_option(tcp::no_delay(true), e);
        auto ep = socket.remote_endpoint(e);
        if (!e) {
          address = ep.address().to_string();
          peer = address + ":" + std::to_string(ep.port());
        }
      }
      close_on_exec(socket.native_handle());
      auto refused_by = state.caps.admit(address);
      if (refused_by != cap::none) {
        refuse(socket.native_handle(), refused_by, peer, tls);
      } else if constexpr (std::is_same_v<Socket, tcp::socket>) {
        if (tls) {
          auto ctx = state.tls;
          std::make_shared<session<tls_socket>>(state, peer, address, ctx, std::move(socket), *ctx)
              ->start();
        } else {
          std::make_shared<session<Socket>>(state, peer, address, nullptr, std::move(socket))
              ->start();
        }
      } else {
        std::make_shared<session<Socket>>(state, peer, address, nullptr, std::move(socket))
            ->start();
      }
      accept<Acceptor, Socket>(acceptor, tls);
    });
  }

  /// Past a cap: a 503 with Retry-After if the socket takes it at once (one
  /// non-blocking send; the request, if it is already there, is read first
  /// so the close is a FIN and not a reset that could lose the answer),
  /// else just closed. The socket closes when the caller's copy goes.
  void refuse(int fd, cap which, const std::string& peer, bool tls) {
    switch (which) {
      case cap::connections:
        state.refused_connections.fetch_add(1, std::memory_order_relaxed);
        break;
      case cap::pending:
        state.refused_pending.fetch_add(1, std::memory_order_relaxed);
        break;
      case cap::pending_per_address:
        state.refused_per_address.fetch_add(1, std::memory_order_relaxed);
        break;
      case cap::none:
        break;
    }
    state.telemetry->limits.count(std::string("ws_") + to_string(which));
    static constexpr char busy[] =
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Type: text/plain\r\n"
        "Content-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";
    if (!tls) {  // a TLS client could not read a cleartext answer
      char scratch[4096];
      (void)::recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT);
      (void)::send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    ::shutdown(fd, SHUT_WR);
    note_refusal(which, peer);
  }

  /// Refusals are logged once per burst: the first one, then a count every
  /// ten seconds while they go on, never a line per connection.
  void note_refusal(cap which, const std::string& peer) {
    if (burst_open) {
      ++burst_refused;
      return;
    }
    burst_open = true;
    burst_refused = 0;
    PARLEY_WARN("ws event=connection_refused cap={} peer={} connections={} pending={} "
                "(refusals that follow are counted, logged every 10 s while they go on)",
                to_string(which), peer, state.caps.connections(), state.caps.pending());
    arm_burst_timer();
  }

  void arm_burst_timer() {
    burst_timer.expires_after(std::chrono::seconds(10));
    burst_timer.async_wait([this](beast::error_code ec) {
      if (ec) return;
      if (burst_refused == 0) {
        burst_open = false;
        return;
      }
      PARLEY_WARN("ws event=connections_refused count={} seconds=10 connections={} pending={} "
                  "refused_by_cap=connections:{},pending:{},pending_per_address:{}",
                  burst_refused, state.caps.connections(), state.caps.pending(),
                  state.refused_connections.load(), state.refused_pending.load(),
                  state.refused_per_address.load());
      burst_refused = 0;
      arm_burst_timer();
    });
  }

  void listen_tcp(const listen_address& a) {
    if (!a.loopback() && state.options.auth.what == auth_config::mode::none)
      throw std::runtime_error("--listen " + a.text
                               + ": a non-loopback address needs --ws-auth (capability-token or "
                                 "signed-bearer-token)");
    if (a.tls && !state.tls) {
      if (state.options.tls_cert_file.empty() || state.options.tls_key_file.empty())
        throw std::runtime_error("--listen " + a.text + " needs --tls-cert and --tls-key");
      state.tls = load_tls_context(state.options.tls_cert_file, state.options.tls_key_file);
    }
    tls_listener = tls_listener || a.tls;
    if (!a.tls && !a.loopback())
      PARLEY_WARN("ws event=cleartext_listener address={} bearer tokens and every conversation "
                  "travel in clear text: use wss:// (--tls-cert, --tls-key) or a TLS proxy",
                  a.text);
    auto acceptor = std::make_unique<tcp::acceptor>(ioc);
    tcp::endpoint ep{asio::ip::make_address(a.host == "localhost" ? "127.0.0.1" : a.host), a.port};
    acceptor->open(ep.protocol());
    close_on_exec(acceptor->native_handle());
    acceptor->set_option(asio::socket_base::reuse_address(true));
    acceptor->bind(ep);
    acceptor->listen();
    auto port = acceptor->local_endpoint().port();
    bound.push_back((a.tls ? "wss://" : "ws://") + a.host + ":" + std::to_string(port));
    accept<tcp::acceptor, tcp::socket>(*acceptor, a.tls);
    tcp_acceptors.push_back(std::move(acceptor));
  }

  void listen_unix(const listen_address& a) {
    // Refuses what is not a stale socket of ours to replace (and holds the
    // path's lock while serving).
    auto claim = std::make_unique<unix_socket_claim>(a.path);
    auto acceptor = std::make_unique<local::acceptor>(ioc);
    local::endpoint ep{a.path};
    acceptor->open(ep.protocol());
    close_on_exec(acceptor->native_handle());
    auto old_mask = ::umask(0177);  // created 0600: only this user may connect
    beast::error_code bind_error;
    acceptor->bind(ep, bind_error);
    ::umask(old_mask);
    if (bind_error) throw std::runtime_error("--listen " + a.text + ": " + bind_error.message());
    claim->bound();
    claims.push_back(std::move(claim));
    acceptor->listen();
    bound.push_back("unix://" + a.path);
    accept<local::acceptor, local::socket>(*acceptor);
    unix_acceptors.push_back(std::move(acceptor));
  }

  std::shared_ptr<shared> owned;
  shared& state;
  asio::io_context& ioc;
  /// The burst of refusals being logged (I/O thread).
  asio::steady_timer burst_timer{ioc};
  bool burst_open = false;
  uint64_t burst_refused = 0;
  std::vector<std::unique_ptr<tcp::acceptor>> tcp_acceptors;
  std::vector<std::unique_ptr<local::acceptor>> unix_acceptors;
  /// The Unix socket paths bound; each is removed at shutdown only if it is
  /// still the socket bound.
  std::vector<std::unique_ptr<unix_socket_claim>> claims;
  std::vector<std::string> bound;
  bool tls_listener = false;  // set before the I/O thread starts
  std::thread io;
};

server::server(runtime& rt, server_options options)
    : impl_(std::make_unique<impl>(rt, std::move(options))) {
  try {
    for (const auto& a : impl_->state.options.addresses) {
      if (a.what == listen_address::kind::tcp) impl_->listen_tcp(a);
      if (a.what == listen_address::kind::unix_socket) impl_->listen_unix(a);
    }
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error(std::string("cannot listen: ") + e.what());
  }
  impl_->io = std::thread([this] {
    // What this thread wakes (a connection with its client's frame) is taken
    // before the workers' queued work (issue 23): an answer to an approval
    // does not wait behind every conversation the workers have queued.
    enqueue_express_from_this_thread(true);
    impl_->ioc.run();
  });
}

server::~server() {
  auto& st = impl_->state;
  asio::post(impl_->ioc, [this] {
    beast::error_code ignored;
    for (auto& a : impl_->tcp_acceptors) a->close(ignored);
    for (auto& a : impl_->unix_acceptors) a->close(ignored);
    std::lock_guard<std::mutex> lock{impl_->state.mtx};
    for (auto& [id, close] : impl_->state.sessions) close();
  });
  std::vector<connection_actor> connections;
  {
    std::lock_guard<std::mutex> lock{st.mtx};
    for (auto& [id, c] : st.connections) connections.push_back(c);
  }
  {
    caf::scoped_actor self{st.rt.system()};
    for (auto& c : connections) self->wait_for(c);
  }
  impl_->ioc.stop();
  if (impl_->io.joinable()) impl_->io.join();
  impl_->unix_acceptors.clear();
  impl_->claims.clear();
}

void server::stop_accepting() {
  std::promise<void> closed;
  asio::post(impl_->ioc, [this, &closed] {
    beast::error_code ignored;
    for (auto& a : impl_->tcp_acceptors) a->close(ignored);
    for (auto& a : impl_->unix_acceptors) a->close(ignored);
    closed.set_value();
  });
  closed.get_future().wait();
}

std::vector<std::string> server::bound() const {
  return impl_->bound;
}

bool server::serves_tls() const {
  return impl_->tls_listener;
}

bool server::reload_tls() {
  auto& st = impl_->state;
  std::shared_ptr<ssl::context> fresh;
  try {
    fresh = load_tls_context(st.options.tls_cert_file, st.options.tls_key_file);
  } catch (const std::exception& e) {
    PARLEY_ERROR("ws event=tls_reload_failed error=\"{}\" the certificate in use stays", e.what());
    return false;
  }
  // Swapped on the I/O thread, where connections take it.
  asio::post(impl_->ioc, [owned = impl_->owned, fresh] { owned->tls = fresh; });
  PARLEY_INFO("ws event=tls_reloaded cert={} key={}", st.options.tls_cert_file,
              st.options.tls_key_file);
  return true;
}

refusal_counts server::refusals() const {
  auto& st = impl_->state;
  return {st.refused_connections.load(), st.refused_pending.load(),
          st.refused_per_address.load(), st.deadlines.load()};
}

}  // namespace parley::ws
