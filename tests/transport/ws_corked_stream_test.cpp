// The corked layer under a WebSocket connection's Beast stream (issue 23):
// a burst of messages reaches the socket in one write, each message whole and
// in order; a pong Beast writes in the middle of a burst keeps its place; a
// close in the middle of a burst takes what was kept with it; and a client's
// close answered mid-burst still gets its echo (the teardown sends what was
// kept). Real loopback sockets, a real Beast client on the other end.

#include "transport/ws_corked_stream.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace parley::ws {
namespace corked_stream_test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

/// A server stream over the corked layer and a plain Beast client, connected
/// and past their handshake, on one io_context the test runs by hand.
struct pair {
  asio::io_context ioc;
  websocket::stream<corked_stream<tcp::socket>> server{ioc};
  websocket::stream<tcp::socket> client{ioc};

  pair() {
    tcp::acceptor acceptor{ioc, {asio::ip::make_address("127.0.0.1"), 0}};
    acceptor.async_accept(server.next_layer().next_layer(),
                          [](beast::error_code ec) { ASSERT_FALSE(ec) << ec.message(); });
    client.next_layer().connect(acceptor.local_endpoint());
    run_until([&] { return server.next_layer().next_layer().is_open(); });
    bool accepted = false;
    bool shaken = false;
    server.async_accept([&](beast::error_code ec) {
      ASSERT_FALSE(ec) << ec.message();
      accepted = true;
    });
    client.async_handshake("127.0.0.1", "/", [&](beast::error_code ec) {
      ASSERT_FALSE(ec) << ec.message();
      shaken = true;
    });
    run_until([&] { return accepted && shaken; });
    server.text(true);
  }

  /// Runs handlers until `done` holds (or 10 s pass: the test then fails).
  void run_until(const std::function<bool()>& done) {
    auto until = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < until) {
      ioc.restart();
      ioc.run_one_for(100ms);
    }
    ASSERT_TRUE(done()) << "timed out";
  }

  /// Writes one message from the server, corked or not, and runs until Beast
  /// says it is written.
  void write(const std::string& text, bool corked) {
    server.next_layer().cork(corked);
    bool written = false;
    server.async_write(asio::buffer(text), [&](beast::error_code ec, size_t) {
      ASSERT_FALSE(ec) << ec.message();
      written = true;
    });
    run_until([&] { return written; });
  }

  /// The client's next message (or the error that ended its read).
  std::string read(beast::error_code* error = nullptr) {
    beast::flat_buffer buffer;
    bool done = false;
    beast::error_code got;
    client.async_read(buffer, [&](beast::error_code ec, size_t) {
      got = ec;
      done = true;
    });
    run_until([&] { return done; });
    if (error) *error = got;
    return got ? std::string() : beast::buffers_to_string(buffer.data());
  }
};

TEST(WsCorkedStream, ABurstReachesTheSocketInOneWriteEachMessageWholeInOrder) {
  pair p;
  auto& layer = p.server.next_layer();
  auto before = layer.socket_writes();
  std::vector<std::string> sent;
  for (int i = 0; i < 50; ++i) sent.push_back("{\"message\":" + std::to_string(i) + "}");
  sent.push_back(std::string(70000, 'x'));  // larger than Beast's own write buffer
  sent.push_back("last");
  for (size_t i = 0; i < sent.size(); ++i) {
    p.write(sent[i], i + 1 < sent.size());
    if (i + 1 < sent.size()) {
      EXPECT_EQ(layer.socket_writes(), before) << "a kept message reached the socket";
      EXPECT_GT(layer.kept(), 0u);
    }
  }
  EXPECT_EQ(layer.socket_writes(), before + 1);
  EXPECT_EQ(layer.kept(), 0u);
  for (const auto& expected : sent) EXPECT_EQ(p.read(), expected);
  // Uncorked, with nothing kept: a message goes straight through.
  p.write("alone", false);
  EXPECT_EQ(layer.socket_writes(), before + 2);
  EXPECT_EQ(p.read(), "alone");
}

TEST(WsCorkedStream, APongWrittenMidBurstKeepsItsPlace) {
  pair p;
  // The server reads, so Beast answers the client's ping itself.
  beast::flat_buffer server_buffer;
  p.server.async_read(server_buffer, [](beast::error_code, size_t) {});
  std::vector<std::string> events;
  p.client.control_callback([&](websocket::frame_type kind, beast::string_view payload) {
    if (kind == websocket::frame_type::pong) events.push_back("pong:" + std::string(payload));
  });
  p.write("one", true);
  auto kept = p.server.next_layer().kept();
  bool pinged = false;
  p.client.async_ping("mid", [&](beast::error_code ec) {
    ASSERT_FALSE(ec) << ec.message();
    pinged = true;
  });
  // Beast's pong, written while the burst is corked, is kept behind "one".
  p.run_until([&] { return pinged && p.server.next_layer().kept() > kept; });
  p.write("two", false);
  EXPECT_EQ(p.server.next_layer().kept(), 0u);
  for (const char* expected : {"one", "two"}) {
    auto got = p.read();
    events.push_back(got);
    EXPECT_EQ(got, expected);
  }
  EXPECT_EQ(events, (std::vector<std::string>{"one", "pong:mid", "two"}));
}

TEST(WsCorkedStream, ACloseMidBurstTakesTheKeptMessagesWithIt) {
  pair p;
  p.write("one", true);
  p.write("two", true);
  // The session's close: uncorked, then Beast's close frame.
  p.server.next_layer().cork(false);
  p.server.async_close(websocket::close_code::going_away, [](beast::error_code) {});
  EXPECT_EQ(p.read(), "one");
  EXPECT_EQ(p.read(), "two");
  beast::error_code ec;
  p.read(&ec);
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(p.client.reason().code, websocket::close_code::going_away);
}

TEST(WsCorkedStream, AClientsCloseAnsweredMidBurstStillGetsItsEcho) {
  pair p;
  beast::flat_buffer server_buffer;
  beast::error_code server_read;
  bool server_done = false;
  p.server.async_read(server_buffer, [&](beast::error_code ec, size_t) {
    server_read = ec;
    server_done = true;
  });
  p.write("kept", true);
  // The server's read path echoes the close while the burst is corked, then
  // tears the connection down: the echo (and what was kept) must go first.
  bool closed = false;
  beast::error_code close_error;
  p.client.async_close(websocket::close_code::normal, [&](beast::error_code ec) {
    close_error = ec;
    closed = true;
  });
  p.run_until([&] { return closed && server_done; });
  EXPECT_FALSE(close_error) << "the client's close got no echo: " << close_error.message();
  EXPECT_EQ(server_read, websocket::error::closed) << server_read.message();
  EXPECT_EQ(p.server.next_layer().kept(), 0u);
}

}  // namespace corked_stream_test
}  // namespace parley::ws
