// A held stream gives its gate slot away (issue 22): a transfer held by
// client::pause (its client is behind) keeps its gate's slot, and the model
// server's, for as long as it is held; past its request's hold_release_ms,
// while another request waits for the gate, it is cut (outcome released)
// and the waiting one starts. With nobody waiting it keeps its slot.
// Real loopback servers (raw sockets) that answer whole once told to.

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
// Named: a unity build shares one anonymous namespace with the other tests.
namespace hold_release {

using namespace std::chrono_literals;
using testing::raw_server;
using testing::read_request_head;
using testing::recording_sink;
using testing::send_all;

const std::string answer_body = std::string(4000, 'y');

/// Answers a request whole once `go` is set (5 s at most), then waits for
/// the client to close the connection.
void answer_whole(int fd, const std::atomic<bool>& go) {
  read_request_head(fd);
  for (int i = 0; i < 500 && !go.load(); ++i) std::this_thread::sleep_for(10ms);
  send_all(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/event-stream\r\n"
                   "Content-Length: "
                   + std::to_string(answer_body.size()) + "\r\n\r\n" + answer_body);
  testing::peer_closes_within(fd, 5s);
}

class admitted_sink : public recording_sink {
 public:
  std::atomic<bool> admitted{false};
  void on_admitted() override { admitted = true; }
  bool wait_admitted() {
    for (int i = 0; i < 500 && !admitted.load(); ++i) std::this_thread::sleep_for(10ms);
    return admitted.load();
  }
};

request gated(std::string url, long hold_release_ms) {
  request req;
  req.url = std::move(url);
  req.body = "{}";
  req.gate = "provider";
  req.gate_limit = 1;
  req.hold_release_ms = hold_release_ms;
  return req;
}

/// Starts a held request that holds the gate's one slot, and returns once
/// the hold has reached the I/O thread (a later ungated start was admitted).
/// The server answers only once `go` is set, which the caller does after
/// this: a caller preempted between start and pause would otherwise see the
/// whole answer read before the hold (CI did, on a loaded machine).
request_id start_held(client& http, raw_server& server, long hold_release_ms,
                      const std::shared_ptr<recording_sink>& sink) {
  auto id = http.start(gated(server.url("/held"), hold_release_ms), sink);
  http.pause(id, true);
  auto marker = std::make_shared<admitted_sink>();
  request plain;
  plain.url = server.url("/marker");
  plain.body = "{}";
  http.start(std::move(plain), marker);
  EXPECT_TRUE(marker->wait_admitted());
  return id;
}

TEST(http_client_hold_release, a_held_stream_gives_its_slot_to_a_waiting_request) {
  std::atomic<bool> go{false};
  raw_server server([&](int fd) { answer_whole(fd, go); });
  client http;
  auto held = std::make_shared<recording_sink>();
  start_held(http, server, 200, held);
  go = true;  // the hold is in place: the answers come now
  auto waiting = std::make_shared<admitted_sink>();
  http.start(gated(server.url("/waiting"), 200), waiting);
  // The held one is cut once its grace is over, and the waiting one runs.
  ASSERT_TRUE(held->wait_done());
  EXPECT_TRUE(held->done().released()) << held->done().message;
  EXPECT_EQ(held->body().size(), 0u);
  ASSERT_TRUE(waiting->wait_done());
  EXPECT_TRUE(waiting->done().ok()) << waiting->done().message;
  EXPECT_EQ(waiting->body(), answer_body);
  EXPECT_EQ(http.live_transfers(), 0u);
  EXPECT_EQ(http.queued_requests(), 0u);
}

// Past its grace with nobody waiting, a held stream keeps its slot (cutting
// it would waste the model's work); the first request to wait takes it.
TEST(http_client_hold_release, a_held_stream_keeps_its_slot_until_someone_waits) {
  std::atomic<bool> go{false};
  raw_server server([&](int fd) { answer_whole(fd, go); });
  client http;
  auto held = std::make_shared<recording_sink>();
  start_held(http, server, 100, held);
  go = true;  // the hold is in place: the answers come now
  std::this_thread::sleep_for(400ms);  // its grace is long over
  EXPECT_FALSE(held->wait_done(1ms)) << "cut with nobody waiting";
  auto waiting = std::make_shared<recording_sink>();
  http.start(gated(server.url("/waiting"), 100), waiting);
  ASSERT_TRUE(held->wait_done());
  EXPECT_TRUE(held->done().released()) << held->done().message;
  ASSERT_TRUE(waiting->wait_done());
  EXPECT_TRUE(waiting->done().ok()) << waiting->done().message;
  EXPECT_EQ(waiting->body(), answer_body);
}

// A request that waits held (its client is behind too) is not worth a cut:
// it would only be held in the cut stream's place. Once it is read again,
// it is.
TEST(http_client_hold_release, a_held_waiting_request_does_not_cut_a_held_stream) {
  std::atomic<bool> go{false};
  raw_server server([&](int fd) { answer_whole(fd, go); });
  client http;
  auto held = std::make_shared<recording_sink>();
  // A grace long enough that the wait's hold arrives within it.
  start_held(http, server, 1'000, held);
  go = true;  // the hold is in place: the answers come now
  auto waiting = std::make_shared<recording_sink>();
  auto waiting_id = http.start(gated(server.url("/waiting"), 1'000), waiting);
  http.pause(waiting_id, true);
  std::this_thread::sleep_for(1'300ms);
  EXPECT_FALSE(held->wait_done(1ms)) << "cut for a request that is held itself";
  http.pause(waiting_id, false);
  ASSERT_TRUE(held->wait_done());
  EXPECT_TRUE(held->done().released()) << held->done().message;
  ASSERT_TRUE(waiting->wait_done());
  EXPECT_TRUE(waiting->done().ok()) << waiting->done().message;
  EXPECT_EQ(waiting->body(), answer_body);
}

// A stream held for less than its grace, or read again, is not cut.
TEST(http_client_hold_release, a_stream_read_again_within_its_grace_is_not_cut) {
  std::atomic<bool> go{false};
  raw_server server([&](int fd) { answer_whole(fd, go); });
  client http;
  auto held = std::make_shared<recording_sink>();
  auto id = start_held(http, server, 5'000, held);
  auto waiting = std::make_shared<recording_sink>();
  http.start(gated(server.url("/waiting"), 5'000), waiting);
  std::this_thread::sleep_for(200ms);
  http.pause(id, false);
  go = true;
  ASSERT_TRUE(held->wait_done());
  EXPECT_TRUE(held->done().ok()) << held->done().message;
  EXPECT_EQ(held->body(), answer_body);
  ASSERT_TRUE(waiting->wait_done());
  EXPECT_TRUE(waiting->done().ok()) << waiting->done().message;
}

// hold_release_ms 0: a held stream never gives its slot away.
TEST(http_client_hold_release, zero_never_cuts) {
  std::atomic<bool> go{false};
  raw_server server([&](int fd) { answer_whole(fd, go); });
  client http;
  auto held = std::make_shared<recording_sink>();
  auto id = start_held(http, server, 0, held);
  go = true;  // the hold is in place: the answers come now
  auto waiting = std::make_shared<admitted_sink>();
  http.start(gated(server.url("/waiting"), 0), waiting);
  std::this_thread::sleep_for(400ms);
  EXPECT_FALSE(held->wait_done(1ms)) << "cut although hold_release_ms is 0";
  EXPECT_FALSE(waiting->admitted.load());
  http.pause(id, false);
  ASSERT_TRUE(held->wait_done());
  EXPECT_TRUE(held->done().ok()) << held->done().message;
  EXPECT_EQ(held->body(), answer_body);
  ASSERT_TRUE(waiting->wait_done());
  EXPECT_TRUE(waiting->done().ok()) << waiting->done().message;
}

}  // namespace hold_release
}  // namespace
}  // namespace parley::http
