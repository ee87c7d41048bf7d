#include "bench/harness/ws_link.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <stdexcept>

namespace parley::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;

struct ws_link::io_state {
  asio::io_context context{1};
  asio::ssl::context tls{asio::ssl::context::tls_client};
  asio::executor_work_guard<asio::io_context::executor_type> work{context.get_executor()};
};

// Everything but the constructor runs on the I/O thread.
struct ws_link::connection {
  virtual ~connection() = default;
  /// Reads frames until the connection ends, handing each to the inbox.
  virtual void read() = 0;
  /// Queues one frame; one async_write at a time.
  virtual void write(std::string text) = 0;
  /// A close frame once the queue is written.
  virtual void close() = 0;
};

namespace {

template <class Socket>
class stream_connection final : public ws_link::connection {
 public:
  stream_connection(websocket::stream<Socket> ws, ws_link::inbox& inbox, int index)
      : ws_(std::move(ws)), inbox_(inbox), index_(index) {}

  void read() override {
    ws_.async_read(buffer_, [this](beast::error_code ec, size_t) {
      if (ec) return inbox_.closed();
      // Stamped here, before the main loop's backlog can add to it.
      auto arrived = std::chrono::steady_clock::now();
      inbox_.deliver({beast::buffers_to_string(buffer_.data()), arrived, index_});
      buffer_.clear();
      read();
    });
  }

  void write(std::string text) override {
    if (closing_) return;
    queue_.push_back(std::move(text));
    if (!writing_) write_next();
  }

  void close() override {
    closing_ = true;
    if (!writing_) close_now();
  }

 private:
  void write_next() {
    writing_ = true;
    ws_.async_write(asio::buffer(queue_.front()), [this](beast::error_code ec, size_t) {
      queue_.pop_front();
      writing_ = false;
      if (ec) return queue_.clear();  // the read side reports the end
      if (!queue_.empty()) return write_next();
      if (closing_) close_now();
    });
  }

  void close_now() {
    ws_.async_close(websocket::close_code::normal, [](beast::error_code) {
      // The pending read ends with the server's close frame.
    });
  }

  websocket::stream<Socket> ws_;
  ws_link::inbox& inbox_;
  int index_;
  beast::flat_buffer buffer_;
  std::deque<std::string> queue_;
  bool writing_ = false;
  bool closing_ = false;
};

/// One connect attempt and handshake; throws boost::system::system_error.
template <class Socket>
websocket::stream<Socket> handshake(websocket::stream<Socket> ws, const std::string& host,
                                    const std::string& target) {
  ws.set_option(websocket::stream_base::decorator([](websocket::request_type& req) {
    req.set(beast::http::field::user_agent, "parley-bench");
  }));
  ws.handshake(host, target);
  ws.text(true);
  return ws;
}

std::unique_ptr<ws_link::connection> connect_tcp(asio::io_context& io, const endpoint& to,
                                                 ws_link::inbox& inbox, int index) {
  tcp::resolver resolver{io};
  websocket::stream<tcp::socket> ws{io};
  asio::connect(ws.next_layer(), resolver.resolve(to.host, std::to_string(to.port)));
  ws.next_layer().set_option(tcp::no_delay(true));  // one small frame is one segment, now
  auto host = to.host + ":" + std::to_string(to.port);
  return std::make_unique<stream_connection<tcp::socket>>(handshake(std::move(ws), host, to.target),
                                                          inbox, index);
}

/// wss://: TLS 1.2 or later, the server's certificate not verified (the
/// bench measures the cost of the encryption, not a trust decision).
std::unique_ptr<ws_link::connection> connect_tls(asio::io_context& io, asio::ssl::context& tls,
                                                 const endpoint& to, ws_link::inbox& inbox,
                                                 int index) {
  using tls_socket = asio::ssl::stream<tcp::socket>;
  tcp::resolver resolver{io};
  websocket::stream<tls_socket> ws{io, tls};
  asio::connect(ws.next_layer().next_layer(), resolver.resolve(to.host, std::to_string(to.port)));
  ws.next_layer().next_layer().set_option(tcp::no_delay(true));
  ws.next_layer().handshake(asio::ssl::stream_base::client);
  auto host = to.host + ":" + std::to_string(to.port);
  return std::make_unique<stream_connection<tls_socket>>(handshake(std::move(ws), host, to.target),
                                                         inbox, index);
}

std::unique_ptr<ws_link::connection> connect_unix(asio::io_context& io, const endpoint& to,
                                                  ws_link::inbox& inbox, int index) {
  websocket::stream<unix_socket::socket> ws{io};
  ws.next_layer().connect(unix_socket::endpoint{to.path});
  return std::make_unique<stream_connection<unix_socket::socket>>(
      handshake(std::move(ws), "localhost", to.target), inbox, index);
}

}  // namespace

void ws_link::inbox::deliver(stamped_message m) {
  std::lock_guard<std::mutex> lock{mtx};
  messages.push_back(std::move(m));
  ready.notify_one();
}

void ws_link::inbox::closed() {
  std::lock_guard<std::mutex> lock{mtx};
  --open;
  ready.notify_all();
}

ws_link::ws_link(endpoint to) : to_(std::move(to)), io_(std::make_unique<io_state>()) {
  io_thread_ = std::thread([this] { io_->context.run(); });
}

ws_link::~ws_link() {
  io_->work.reset();
  io_->context.stop();
  io_thread_.join();
  connections_.clear();  // before the context their pending operations belong to
}

int ws_link::open(int count, std::chrono::steady_clock::time_point deadline) {
  int first = connections();
  for (int k = 0; k < count; ++k) {
    int index = connections();
    std::unique_ptr<connection> c;
    for (;;) {
      try {
        if (to_.what == endpoint::kind::unix_socket)
          c = connect_unix(io_->context, to_, inbox_, index);
        else if (to_.tls)
          c = connect_tls(io_->context, io_->tls, to_, inbox_, index);
        else
          c = connect_tcp(io_->context, to_, inbox_, index);
        break;
      } catch (const boost::system::system_error& e) {
        if (std::chrono::steady_clock::now() >= deadline)
          throw std::runtime_error("cannot open WebSocket connection " + std::to_string(index) + ": "
                                   + e.what());
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // not listening yet
      }
    }
    {
      std::lock_guard<std::mutex> lock{inbox_.mtx};
      ++inbox_.open;
    }
    auto* raw = c.get();
    connections_.push_back(std::move(c));
    asio::post(io_->context, [raw] { raw->read(); });
  }
  return first;
}

std::optional<stamped_message> ws_link::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock{inbox_.mtx};
  inbox_.ready.wait_for(lock, timeout, [this] { return !inbox_.messages.empty() || inbox_.open == 0; });
  if (inbox_.messages.empty()) return std::nullopt;
  auto m = std::move(inbox_.messages.front());
  inbox_.messages.pop_front();
  return m;
}

bool ws_link::ended() const {
  std::lock_guard<std::mutex> lock{inbox_.mtx};
  return !connections_.empty() && inbox_.open == 0 && inbox_.messages.empty();
}

void ws_link::send(int index, std::string text) {
  auto* c = connections_.at(static_cast<size_t>(index)).get();
  asio::post(io_->context, [c, text = std::move(text)]() mutable { c->write(std::move(text)); });
}

void ws_link::close(std::chrono::milliseconds timeout) {
  for (auto& c : connections_) asio::post(io_->context, [raw = c.get()] { raw->close(); });
  std::unique_lock<std::mutex> lock{inbox_.mtx};
  inbox_.ready.wait_for(lock, timeout, [this] { return inbox_.open == 0; });
  inbox_.messages.clear();
}

}  // namespace parley::bench
