// Backpressure in the streaming HTTP client (issue 22): client::pause holds a
// transfer's response, a sink without room (sink::ready) holds it too, and
// the two causes share libcurl's one pause state, so the transfer reads again
// only once both are gone. Real loopback servers (raw sockets) whose whole
// answer is written at once: whatever the client does not hold, it reads.

#include "actors/model/http/client.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "tests/actors/model/http/raw_server.hpp"
#include "tests/actors/model/http/recording_sink.hpp"

namespace parley::http {
namespace {

using namespace std::chrono_literals;
using testing::raw_server;
using testing::read_request_head;
using testing::recording_sink;
using testing::send_all;

// How long a held transfer is watched for bytes it must not deliver: the
// whole answer is in its socket by then (loopback), so an unheld transfer
// would have read it many times over.
constexpr auto held_watch = 300ms;
const std::string whole_answer_body = std::string(4000, 'x');

/// Answers a request whole once `go` is set (5 s at most), then waits (a few
/// seconds at most) for the client to close the connection.
void answer_whole(int fd, const std::atomic<bool>& go) {
  read_request_head(fd);
  for (int i = 0; i < 500 && !go.load(); ++i) std::this_thread::sleep_for(10ms);
  send_all(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/event-stream\r\n"
                   "Content-Length: "
                   + std::to_string(whole_answer_body.size()) + "\r\n\r\n" + whole_answer_body);
  testing::peer_closes_within(fd, 5s);
}

/// A sink that knows when its request was admitted (the I/O thread applies
/// its commands in order: whatever was asked before its start is done).
class admitted_sink : public recording_sink {
 public:
  std::atomic<bool> admitted{false};
  void on_admitted() override { admitted = true; }
  bool wait_admitted() {
    for (int i = 0; i < 500 && !admitted.load(); ++i) std::this_thread::sleep_for(10ms);
    return admitted.load();
  }
};

request held_post_to(std::string url) {
  request req;
  req.url = std::move(url);
  req.body = "{}";
  return req;
}

/// A sink that has room only while `room` is set; counts its refusals.
class roomy_sink : public recording_sink {
 public:
  std::atomic<bool> room{true};
  std::atomic<int> refused{0};
  bool ready() override {
    if (room.load()) return true;
    ++refused;
    return false;
  }
};

// A request held while it waits for its gate starts held once admitted:
// libcurl refuses curl_easy_pause before the transfer has a connection, so
// the hold must not rest on that call (it did: the held stream was read at
// full speed, and its hold was only felt at its next resume).
TEST(http_client_pause, a_request_held_in_its_gate_starts_held) {
  std::atomic<bool> go{false};
  raw_server server([&](int fd) { answer_whole(fd, go); });
  client http;
  auto first = std::make_shared<recording_sink>();
  auto second = std::make_shared<recording_sink>();
  auto gated = [&](const char* path) {
    auto req = held_post_to(server.url(path));
    req.gate = "provider";
    req.gate_limit = 1;
    return req;
  };
  http.start(gated("/first"), first);
  auto id = http.start(gated("/second"), second);
  http.pause(id, true);  // it waits behind the first meanwhile
  // Once a later start is admitted, the hold has reached the I/O thread;
  // only then does the server answer (the first, then the second at once).
  auto marker = std::make_shared<admitted_sink>();
  http.start(held_post_to(server.url("/marker")), marker);
  ASSERT_TRUE(marker->wait_admitted());
  go = true;
  ASSERT_TRUE(first->wait_done());
  EXPECT_EQ(first->body(), whole_answer_body);
  // The second runs now, its whole answer written as soon as it asks.
  std::this_thread::sleep_for(held_watch);
  EXPECT_EQ(second->body().size(), 0u) << "read while held";
  EXPECT_FALSE(second->wait_done(1ms));
  http.pause(id, false);
  ASSERT_TRUE(second->wait_done());
  EXPECT_TRUE(second->done().ok()) << second->done().message;
  EXPECT_EQ(second->body(), whole_answer_body);
  EXPECT_FALSE(second->out_of_order());
}

// Held at once after its start: the same, whether or not its connection was
// up when the hold reached the I/O thread.
TEST(http_client_pause, a_request_held_right_after_its_start_reads_nothing) {
  std::atomic<bool> go{false};
  raw_server server([&](int fd) { answer_whole(fd, go); });
  client http;
  auto sink = std::make_shared<recording_sink>();
  auto id = http.start(held_post_to(server.url("/held")), sink);
  http.pause(id, true);
  auto marker = std::make_shared<admitted_sink>();
  http.start(held_post_to(server.url("/marker")), marker);
  ASSERT_TRUE(marker->wait_admitted());
  go = true;  // the hold is in place: the answer comes now
  std::this_thread::sleep_for(held_watch);
  EXPECT_EQ(sink->body().size(), 0u) << "read while held";
  http.pause(id, false);
  ASSERT_TRUE(sink->wait_done());
  EXPECT_EQ(sink->body(), whole_answer_body);
}

// Paused by its sink (no room) and then held: the sink's room alone does not
// resume it, nor does the end of the hold alone; the last cause gone does.
TEST(http_client_pause, both_causes_must_be_gone_before_it_reads_again) {
  for (bool room_first : {true, false}) {
    SCOPED_TRACE(room_first ? "room first, then the hold ends" : "the hold ends, then room");
    std::atomic<bool> go{true};
    raw_server server([&](int fd) { answer_whole(fd, go); });
    client http;
    auto sink = std::make_shared<roomy_sink>();
    sink->room = false;
    auto id = http.start(held_post_to(server.url("/both")), sink);
    for (int i = 0; i < 500 && sink->refused.load() == 0; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_GT(sink->refused.load(), 0) << "the sink was never asked";
    http.pause(id, true);
    auto lift_first = [&] {
      if (room_first) {
        sink->room = true;
        http.flow(id);
      } else {
        http.pause(id, false);
      }
    };
    auto lift_second = [&] {
      if (room_first) {
        http.pause(id, false);
      } else {
        sink->room = true;
        http.flow(id);
      }
    };
    lift_first();
    std::this_thread::sleep_for(held_watch);
    EXPECT_EQ(sink->body().size(), 0u) << "read with one cause left";
    lift_second();
    ASSERT_TRUE(sink->wait_done());
    EXPECT_TRUE(sink->done().ok()) << sink->done().message;
    EXPECT_EQ(sink->body(), whole_answer_body);
  }
}

}  // namespace
}  // namespace parley::http
