#pragma once
// The layer under a WebSocket connection's Beast stream that lets a burst of
// messages reach the socket in one write (issue 23). Beast writes one message
// per async_write, each with its own write syscall; one I/O thread serves
// every connection, and on a busy server half of its time went to those
// syscalls. While *corked*, what Beast writes here is kept (and its write
// completes, as if written); the first write made uncorked sends everything
// kept before it, and itself, in one write to the socket.
//
// Why a layer and not frames written by hand onto the socket: Beast writes
// frames of its own from its read path (the pong to a client's ping, the
// close it echoes) and from its idle timer (pings). It orders every write of
// a stream (its own and ours) behind one internal lock; a write made past
// Beast could land in the middle of one of those. Under Beast, this layer
// sees every frame in the order Beast wrote it, so a pong in the middle of a
// burst is kept in its place like any message, and nothing is framed by hand.
//
// Rules (the session's, ws_server.cpp): it corks only for the messages of a
// burst but the last, and uncorks before the last one and before a close;
// so nothing is kept past a burst. A teardown (the close handshake's end)
// sends what is still kept before it shuts the socket. One write at a time,
// as for any AsyncWriteStream: Beast never starts one before the last ended.

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/assert.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <cstddef>
#include <string>
#include <utility>

namespace parley::ws {

template <class Next>
class corked_stream {
 public:
  using next_layer_type = Next;
  using executor_type = typename Next::executor_type;

  template <class... Args>
  explicit corked_stream(Args&&... args) : next_(std::forward<Args>(args)...) {}

  next_layer_type& next_layer() { return next_; }
  const next_layer_type& next_layer() const { return next_; }
  executor_type get_executor() { return next_.get_executor(); }

  /// While on, writes are kept rather than sent.
  void cork(bool on) { corked_ = on; }
  bool corked() const { return corked_; }
  /// Bytes kept, not yet handed to the socket.
  size_t kept() const { return kept_.size(); }
  /// Writes to the socket made (a kept burst and the write that sends it
  /// count as one).
  size_t socket_writes() const { return socket_writes_; }

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return next_.async_read_some(buffers, std::forward<Token>(token));
  }

  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::beast::error_code, size_t)>(
        [this](auto handler, const ConstBuffers& b) { write(std::move(handler), b); }, token,
        buffers);
  }

  /// Sends what is kept, blocking (a synchronous teardown's).
  void send_kept(boost::beast::error_code& ec) {
    if (kept_.empty()) return;
    ++socket_writes_;
    boost::asio::write(next_, boost::asio::buffer(kept_), ec);
    kept_.clear();
  }

  /// Sends what is kept, then calls `done(ec)` (at once, posted, when nothing
  /// is kept). For the teardown: what was kept goes out before the socket
  /// shuts.
  template <class Handler>
  void send_kept(Handler&& done) {
    if (kept_.empty()) {
      boost::asio::post(get_executor(),
                        boost::beast::bind_front_handler(std::forward<Handler>(done),
                                                         boost::beast::error_code{}));
      return;
    }
    BOOST_ASSERT(sending_.empty());  // one write at a time
    sending_.swap(kept_);
    ++socket_writes_;
    boost::asio::async_write(
        next_, boost::asio::buffer(sending_),
        [this, done = std::forward<Handler>(done)](boost::beast::error_code ec, size_t) mutable {
          sent();
          done(ec);
        });
  }

 private:
  template <class Handler, class ConstBuffers>
  void write(Handler handler, const ConstBuffers& buffers) {
    BOOST_ASSERT(sending_.empty());  // one write at a time
    size_t n = boost::asio::buffer_size(buffers);
    if (corked_) {
      keep(buffers);
      boost::asio::post(get_executor(), boost::beast::bind_front_handler(
                                            std::move(handler), boost::beast::error_code{}, n));
      return;
    }
    if (kept_.empty()) {  // nothing before it: straight through, no copy
      ++socket_writes_;
      next_.async_write_some(buffers, std::move(handler));
      return;
    }
    // The kept burst and this write, one contiguous buffer: one write
    // syscall (and over TLS one record rather than one per piece).
    keep(buffers);
    sending_.swap(kept_);
    ++socket_writes_;
    boost::asio::async_write(
        next_, boost::asio::buffer(sending_),
        [this, n, handler = std::move(handler)](boost::beast::error_code ec, size_t) mutable {
          sent();
          // Beast asked for this write's bytes; the kept ones it was told
          // of when it wrote them.
          handler(ec, ec ? size_t{0} : n);
        });
  }

  template <class ConstBuffers>
  void keep(const ConstBuffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::const_buffer b(*it);
      kept_.append(static_cast<const char*>(b.data()), b.size());
    }
  }

  void sent() {
    sending_.clear();
    // A large burst leaves no large buffer behind for the connection's life:
    // the two buffers trade places at each send, so an idle connection keeps
    // at most twice this.
    if (sending_.capacity() > kMaxRetained) std::string().swap(sending_);
  }

  static constexpr size_t kMaxRetained = size_t{16} << 10;

  Next next_;
  bool corked_ = false;
  std::string kept_;     // written by Beast while corked, not sent yet
  std::string sending_;  // being written to the socket
  size_t socket_writes_ = 0;
};

/// Beast ends a connection (after the close handshake, or an error) by
/// tearing its stream down: what is kept goes out first, then the layer
/// below is torn down as it would be without this one.
template <class Next, class Handler>
void async_teardown(boost::beast::role_type role, corked_stream<Next>& stream, Handler&& handler) {
  stream.send_kept(
      [role, &stream, handler = std::forward<Handler>(handler)](boost::beast::error_code) mutable {
        using boost::beast::websocket::async_teardown;
        async_teardown(role, stream.next_layer(), std::move(handler));
      });
}

template <class Next>
void teardown(boost::beast::role_type role, corked_stream<Next>& stream,
              boost::beast::error_code& ec) {
  stream.send_kept(ec);
  using boost::beast::websocket::teardown;
  teardown(role, stream.next_layer(), ec);
}

}  // namespace parley::ws
