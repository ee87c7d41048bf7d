// stdio's connection hands its lines to the writing thread a burst at a time
// (connection_options::write_burst): every line whole, in order, each once;
// the lines of the messages its mailbox held go in one hand-off, not one per
// line; and a close handed in the middle of a burst comes after its lines.
// A real connection actor on a real (threaded) actor system; its client's
// requests come before `initialize`, so the session answers each itself
// ("Not initialized") and no runtime is needed.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "transport/connection.hpp"

namespace parley {
namespace {
namespace burst_test {

using namespace std::chrono_literals;

/// What the transport was handed, and when the output was closed.
struct handed {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::vector<std::string>> bursts;
  size_t lines = 0;
  bool hold_first = false;     // the first hand-off waits for release()
  bool released = false;
  long closed_after = -1;      // lines handed when the close came

  void take(std::vector<std::string>& lines_in) {
    std::unique_lock<std::mutex> lock{mtx};
    bursts.push_back(lines_in);
    lines += lines_in.size();
    lines_in.clear();
    cv.notify_all();
    if (hold_first && bursts.size() == 1) cv.wait(lock, [this] { return released; });
  }
  void release() {
    std::lock_guard<std::mutex> lock{mtx};
    released = true;
    cv.notify_all();
  }
  template <class Pred>
  bool wait(Pred p) {
    std::unique_lock<std::mutex> lock{mtx};
    return cv.wait_for(lock, 10s, [&] { return p(); });
  }
};

/// A writer that only closes (as stdio's does once the lines go by bursts).
line_writer_actor::behavior_type closing_writer(line_writer_actor::pointer,
                                                std::shared_ptr<handed> h) {
  return {
      [](std::string&) { ADD_FAILURE() << "a line came to the writer, not in a burst"; },
      [](std::string&, std::shared_ptr<const void>&) {
        ADD_FAILURE() << "a line came to the writer, not in a burst";
      },
      [](atom::flush) {},
      [h](atom::close) {
        std::lock_guard<std::mutex> lock{h->mtx};
        h->closed_after = static_cast<long>(h->lines);
        h->cv.notify_all();
        return atom::ok::value;
      },
  };
}

/// The thread manager: the connection only tells it the client is gone.
/// (An argument it does not need: CAF 0.17 spawns a function actor without
/// arguments by dereferencing an empty tuple's null pointer, which UBSan
/// reports.)
caf::behavior quiet_threads(caf::event_based_actor* self, std::shared_ptr<handed>) {
  self->set_default_handler(caf::drop);
  return {[](atom::gone, const client_actor&) {}};
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<handed> h = std::make_shared<handed>();
  connection_actor conn;

  explicit fixture(bool hold_first) {
    h->hold_first = hold_first;
    sys = std::make_unique<caf::actor_system>(cfg);
    connection_options options;
    options.config = std::make_shared<runtime_config>();
    options.telemetry = std::make_shared<runtime_telemetry>();
    options.shutdown_on_close = false;
    options.label = "burst-test";
    auto hh = h;
    options.write_burst = [hh](std::vector<std::string>& lines) { hh->take(lines); };
    auto threads = caf::actor_cast<thread_manager_actor>(sys->spawn(quiet_threads, h));
    auto out = sys->spawn(closing_writer, h);
    conn = sys->spawn<caf::detached>(connection, threads, out, options);
  }
  ~fixture() {
    h->release();
    caf::anon_send_exit(conn, caf::exit_reason::user_shutdown);
    sys->await_all_actors_done();
  }

  void line(int id) {
    caf::anon_send(conn, atom::line::value,
                   R"({"id":)" + std::to_string(id) + R"(,"method":"thread/list","params":{}})");
  }
};

/// The id of each reply, in the order handed; each line ends in '\n'.
std::vector<int> ids_of(const std::vector<std::string>& lines) {
  std::vector<int> ids;
  for (auto& l : lines) {
    EXPECT_FALSE(l.empty());
    EXPECT_EQ(l.back(), '\n') << l;
    auto j = protocol::json::parse(l, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << l;
    if (j.is_discarded()) continue;
    EXPECT_TRUE(j.contains("error")) << l;
    ids.push_back(j.value("id", -1));
  }
  return ids;
}

std::vector<int> range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i <= to; ++i) v.push_back(i);
  return v;
}

// Eight requests waiting together in the mailbox (held back behind the
// first hand-off): their eight replies are handed over in one burst, in
// order, once the mailbox is empty.
TEST(ConnectionBurst, LinesOfTheMessagesAtHandGoInOneHandOffInOrder) {
  fixture f{true};
  f.line(0);
  ASSERT_TRUE(f.h->wait([&] { return f.h->bursts.size() == 1; }));
  for (int i = 1; i <= 8; ++i) f.line(i);
  f.h->release();
  ASSERT_TRUE(f.h->wait([&] { return f.h->lines == 9; }));
  std::lock_guard<std::mutex> lock{f.h->mtx};
  ASSERT_EQ(f.h->bursts.size(), 2u) << "one hand-off for the first line, one for the eight";
  EXPECT_EQ(ids_of(f.h->bursts[0]), std::vector<int>{0});
  EXPECT_EQ(ids_of(f.h->bursts[1]), range(1, 8));
}

// Many more than a burst holds (its cap is 256 lines): every reply is
// handed once and in order, over a few hand-offs, none larger than the cap.
TEST(ConnectionBurst, ALongMailboxIsHandedInOrderInCappedBursts) {
  fixture f{true};
  constexpr int n = 2000;
  f.line(0);
  ASSERT_TRUE(f.h->wait([&] { return f.h->bursts.size() == 1; }));
  for (int i = 1; i < n; ++i) f.line(i);
  f.h->release();
  ASSERT_TRUE(f.h->wait([&] { return f.h->lines == static_cast<size_t>(n); }));
  std::lock_guard<std::mutex> lock{f.h->mtx};
  std::vector<int> all;
  for (auto& b : f.h->bursts) {
    EXPECT_LE(b.size(), 256u);
    auto ids = ids_of(b);
    all.insert(all.end(), ids.begin(), ids.end());
  }
  EXPECT_EQ(all, range(0, n - 1));
  EXPECT_LT(f.h->bursts.size(), static_cast<size_t>(n) / 4) << "lines are handed in bursts";
}

// The input ends behind requests still in the mailbox, with their replies
// in the burst not handed yet: the output closes after every one of them.
TEST(ConnectionBurst, ACloseInTheMiddleOfABurstComesAfterItsLines) {
  fixture f{true};
  f.line(0);
  ASSERT_TRUE(f.h->wait([&] { return f.h->bursts.size() == 1; }));
  for (int i = 1; i <= 5; ++i) f.line(i);
  caf::anon_send(f.conn, atom::eof::value);
  f.h->release();
  ASSERT_TRUE(f.h->wait([&] { return f.h->closed_after >= 0; }));
  std::lock_guard<std::mutex> lock{f.h->mtx};
  EXPECT_EQ(f.h->closed_after, 6) << "the close came before lines written ahead of it";
  std::vector<int> all;
  for (auto& b : f.h->bursts) {
    auto ids = ids_of(b);
    all.insert(all.end(), ids.begin(), ids.end());
  }
  EXPECT_EQ(all, range(0, 5));
}

}  // namespace burst_test
}  // namespace
}  // namespace parley
