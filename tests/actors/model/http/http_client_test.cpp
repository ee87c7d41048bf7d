// The streaming HTTP client against real loopback servers: cpp-httplib where
// a well-behaved server will do, raw sockets (raw_server) where the server
// must stall, cut the connection, or watch it being closed.

#include "actors/model/http/client.hpp"

#include <gtest/gtest.h>

#include "tests/actors/model/http/httplib_server.hpp"
#include "tests/actors/model/http/raw_server.hpp"
#include "tests/actors/model/http/recording_sink.hpp"

namespace parley::http {
namespace {

using namespace std::chrono_literals;
using testing::httplib_server;
using testing::peer_closes_within;
using testing::raw_server;
using testing::read_request_head;
using testing::recording_sink;
using testing::send_all;

constexpr const char* api_key = "sk-parley-test-5f2b9c0e7d41";

request post_to(std::string url, std::string body = "{}") {
  request req;
  req.url = std::move(url);
  req.headers = {{"Authorization", std::string("Bearer ") + api_key},
                 {"Content-Type", "application/json"}};
  req.body = std::move(body);
  return req;
}

// Each chunk is sent only once the client has seen the one before: a client
// that held the body back until the end would stall the server (and fail).
TEST(http_client, streams_the_body_as_it_arrives) {
  std::mutex mtx;
  std::condition_variable cv;
  std::string seen;
  bool server_waited_in_vain = false;
  httplib_server server;
  server.svr.Post("/stream", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& out) {
      for (std::string chunk : {"data: one\n\n", "data: two\n\n", "data: three\n\n"}) {
        out.write(chunk.data(), chunk.size());
        std::unique_lock<std::mutex> lock{mtx};
        if (!cv.wait_for(lock, 5s, [&] { return seen.find(chunk) != std::string::npos; }))
          server_waited_in_vain = true;
      }
      out.done();
      return true;
    });
  });
  server.start();
  auto sink = std::make_shared<recording_sink>();
  sink->after_body = [&](std::string_view piece) {
    std::lock_guard<std::mutex> guard{mtx};
    seen += piece;
    cv.notify_all();
  };
  client http;
  http.start(post_to(server.url("/stream")), sink);
  ASSERT_TRUE(sink->wait_done());
  EXPECT_TRUE(sink->done().ok()) << sink->done().message;
  EXPECT_FALSE(server_waited_in_vain);
  EXPECT_EQ(sink->status(), 200);
  EXPECT_EQ(sink->body(), "data: one\n\ndata: two\n\ndata: three\n\n");
  EXPECT_GE(sink->chunk_count(), 3u);
  ASSERT_NE(find_header(sink->headers(), "content-type"), nullptr);
  EXPECT_EQ(*find_header(sink->headers(), "content-type"), "text/event-stream");
  EXPECT_FALSE(sink->out_of_order());
  EXPECT_EQ(sink->done_calls(), 1);
  EXPECT_EQ(http.live_transfers(), 0u);
}

TEST(http_client, reports_an_error_status_with_its_headers) {
  httplib_server server;
  server.svr.Post("/v1/responses", [](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_header("Retry-After", "7");
    res.set_content("slow down", "text/plain");
  });
  server.start();
  auto sink = std::make_shared<recording_sink>();
  client http;
  http.start(post_to(server.url("/v1/responses")), sink);
  ASSERT_TRUE(sink->wait_done());
  EXPECT_TRUE(sink->done().ok());  // the response arrived whole
  EXPECT_EQ(sink->status(), 429);
  EXPECT_EQ(sink->status_calls(), 1);
  ASSERT_NE(find_header(sink->headers(), "retry-after"), nullptr);
  EXPECT_EQ(*find_header(sink->headers(), "Retry-After"), "7");
  EXPECT_EQ(sink->body(), "slow down");
}

TEST(http_client, sends_method_headers_body_and_query) {
  httplib_server server;
  server.svr.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content("POST " + req.get_header_value("Authorization") + " " + req.body, "text/plain");
  });
  server.svr.Get("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content("GET " + req.get_param_value("q") + "|" + req.get_param_value("n"), "text/plain");
  });
  server.start();
  client http;
  auto posted = std::make_shared<recording_sink>();
  http.start(post_to(server.url("/echo"), R"({"input":"hi"})"), posted);
  request get;
  get.method = verb::get;
  get.url = with_query(server.url("/echo"), {{"q", "a b&c=d/é"}, {"n", "1"}});
  auto got = std::make_shared<recording_sink>();
  http.start(get, got);
  ASSERT_TRUE(posted->wait_done());
  ASSERT_TRUE(got->wait_done());
  EXPECT_EQ(posted->body(), std::string("POST Bearer ") + api_key + R"( {"input":"hi"})");
  EXPECT_EQ(got->body(), "GET a b&c=d/é|1");
}

TEST(http_client, a_refused_connection_fails_without_the_key_in_the_message) {
  testing::refused_port nobody;
  auto sink = std::make_shared<recording_sink>();
  client http;
  http.start(post_to("http://127.0.0.1:" + std::to_string(nobody.port) + "/v1/responses"), sink);
  ASSERT_TRUE(sink->wait_done());
  EXPECT_EQ(sink->done().result, outcome::kind::failed);
  EXPECT_NE(sink->done().message.find("onnect"), std::string::npos) << sink->done().message;
  EXPECT_EQ(sink->done().message.find("sk-parley"), std::string::npos);
  EXPECT_EQ(sink->status_calls(), 0);
  EXPECT_EQ(sink->done_calls(), 1);
}

// A header that would smuggle a second line is refused before any byte is
// sent, and the refusal names the header, never its value.
TEST(http_client, a_header_with_a_line_break_is_refused_without_quoting_it) {
  raw_server server([](int fd) { read_request_head(fd); });
  auto req = post_to(server.url("/x"));
  req.headers[0].second = std::string("Bearer ") + api_key + "\r\nX-Injected: 1";
  auto sink = std::make_shared<recording_sink>();
  client http;
  http.start(req, sink);
  ASSERT_TRUE(sink->wait_done());
  EXPECT_EQ(sink->done().result, outcome::kind::failed);
  EXPECT_NE(sink->done().message.find("Authorization"), std::string::npos);
  EXPECT_EQ(sink->done().message.find("sk-parley"), std::string::npos) << sink->done().message;
  EXPECT_EQ(server.accepted(), 0);
}

// The server streams until the client hangs up (or 10 s pass).
void stream_until_closed(int fd, std::atomic<bool>& saw_close) {
  read_request_head(fd);
  send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
               "Transfer-Encoding: chunked\r\n\r\n");
  for (int i = 0; i < 1000; ++i) {
    if (!send_all(fd, "6\r\ntick\n\n\r\n") || peer_closes_within(fd, 10ms)) {
      saw_close = true;
      return;
    }
  }
}

TEST(http_client, abort_mid_stream_stops_the_bytes_and_closes_the_connection) {
  std::atomic<bool> saw_close{false};
  raw_server server([&](int fd) { stream_until_closed(fd, saw_close); });
  auto sink = std::make_shared<recording_sink>();
  client http;
  auto id = http.start(post_to(server.url("/v1/responses")), sink);
  ASSERT_TRUE(sink->wait_body(3 * 6));
  EXPECT_EQ(http.live_transfers(), 1u);
  http.abort(id);
  ASSERT_TRUE(sink->wait_done());
  auto received = sink->body().size();
  EXPECT_TRUE(sink->done().aborted());
  for (int i = 0; i < 100 && !saw_close; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(saw_close);
  http.abort(id);  // finished: nothing more
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(sink->body().size(), received);
  EXPECT_EQ(sink->done_calls(), 1);
  EXPECT_FALSE(sink->out_of_order());
  EXPECT_EQ(http.live_transfers(), 0u);
}

// Abort queued behind its own start, and abort from inside a sink (on the
// I/O thread itself): each ends its transfer once.
TEST(http_client, abort_right_after_start_and_from_the_sink) {
  std::atomic<bool> saw_close{false};
  raw_server server([&](int fd) { stream_until_closed(fd, saw_close); });
  client http;
  auto early = std::make_shared<recording_sink>();
  http.abort(http.start(post_to(server.url("/a")), early));
  std::atomic<request_id> id{0};
  auto inside = std::make_shared<recording_sink>();
  inside->after_body = [&](std::string_view) { http.abort(id.load()); };
  id = http.start(post_to(server.url("/b")), inside);
  ASSERT_TRUE(early->wait_done());
  ASSERT_TRUE(inside->wait_done());
  EXPECT_TRUE(early->done().aborted());
  EXPECT_TRUE(inside->done().aborted());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(early->done_calls(), 1);
  EXPECT_EQ(inside->done_calls(), 1);
  EXPECT_FALSE(inside->out_of_order());
  EXPECT_EQ(http.live_transfers(), 0u);
}

TEST(http_client, a_server_that_closes_mid_body_is_an_error) {
  // One with a Content-Length it does not keep, one whose chunks never end.
  for (std::string head : {"Content-Length: 1000\r\n\r\n", "Transfer-Encoding: chunked\r\n\r\n"}) {
    raw_server server([&](int fd) {
      read_request_head(fd);
      auto body = head[0] == 'C' ? std::string(100, 'x') : "64\r\n" + std::string(100, 'x') + "\r\n";
      send_all(fd, "HTTP/1.1 200 OK\r\n" + head + body);
    });
    auto sink = std::make_shared<recording_sink>();
    client http;
    http.start(post_to(server.url("/v1/responses")), sink);
    ASSERT_TRUE(sink->wait_done());
    EXPECT_EQ(sink->done().result, outcome::kind::failed) << head;
    EXPECT_FALSE(sink->done().message.empty());
    EXPECT_EQ(sink->done().message.find("sk-parley"), std::string::npos);
    EXPECT_EQ(sink->status(), 200);
    EXPECT_EQ(sink->body(), std::string(100, 'x'));
  }
}

TEST(http_client, shutdown_aborts_what_runs_and_refuses_what_comes) {
  std::atomic<bool> saw_close{false};
  raw_server server([&](int fd) { stream_until_closed(fd, saw_close); });
  auto running = std::make_shared<recording_sink>();
  client http;
  http.start(post_to(server.url("/v1/responses")), running);
  ASSERT_TRUE(running->wait_body(6));
  http.shutdown();
  EXPECT_TRUE(running->done().aborted());
  EXPECT_EQ(running->done_calls(), 1);
  auto late = std::make_shared<recording_sink>();
  http.start(post_to(server.url("/v1/responses")), late);
  EXPECT_TRUE(late->done().aborted());  // at once, on this thread
  for (int i = 0; i < 100 && !saw_close; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(saw_close);
  http.shutdown();  // again: nothing
}

TEST(http_client, a_throwing_sink_fails_its_transfer) {
  httplib_server server;
  server.svr.Post("/x", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("body", "text/plain");
  });
  server.start();
  auto sink = std::make_shared<recording_sink>();
  sink->after_body = [](std::string_view) { throw std::runtime_error("full"); };
  client http;
  http.start(post_to(server.url("/x")), sink);
  ASSERT_TRUE(sink->wait_done());
  EXPECT_EQ(sink->done().result, outcome::kind::failed);
  EXPECT_NE(sink->done().message.find("full"), std::string::npos) << sink->done().message;
}

}  // namespace
}  // namespace parley::http
