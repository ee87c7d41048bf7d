// The RPC session in memory, with golden transcripts (as clangd tests its
// transport): no actors, no pipes. A transcript is a list of lines:
//
//   -> {json}      a line the client sends
//   <- {json}      the next line the session must write; objects match when
//                  every key given here matches (so a transcript names what
//                  it is about), arrays and scalars exactly
//   <= text        the next event the fake runtime records (a decision
//                  delivered, a runtime call made); a final * matches any rest
//   !ask ID KIND THREAD TURN ITEM    the runtime asks (KIND: command|file)
//   !withdraw ID   the runtime withdraws ask ID
//   !eof           the client's input ends
//   # ...          a comment
//
// At the end nothing may be left unread.

#include "transport/rpc_session.hpp"

#include "actors/core/errors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>
#include <fstream>
#include <sstream>

namespace parley::rpc {
namespace {

using protocol::json;

/// A runtime with canned answers that records each call it gets.
class fake_runtime final : public runtime_port {
 public:
  std::deque<std::string>& events;
  std::string assigned;  // the last thread/start's placed id
  explicit fake_runtime(std::deque<std::string>& e) : events(e) {}

  void thread_start(protocol::thread_start_params p,
                    reply<protocol::thread_session_response> done) override {
    events.push_back("thread_start cwd=" + p.cwd.value_or("-"));
    assigned = p.assigned_id;
    protocol::thread_session_response r;
    r.thread_.id = "00000000-0000-7000-8000-000000000001";
    r.model = "scripted";
    r.cwd = p.cwd.value_or("/w");
    done(std::move(r));
  }
  void thread_resume(protocol::thread_resume_params p,
                     reply<protocol::thread_session_response> done) override {
    events.push_back("thread_resume " + p.thread_id);
    done(make_error(errc::invalid_request, "no rollout found for thread id " + p.thread_id));
  }
  void thread_fork(protocol::thread_fork_params p,
                   reply<protocol::thread_session_response> done) override {
    events.push_back("thread_fork " + p.thread_id);
    done(make_error(errc::invalid_request, "no rollout found for thread id " + p.thread_id));
  }
  void thread_read(protocol::thread_read_params p,
                   reply<protocol::thread_read_response> done) override {
    events.push_back("thread_read " + p.thread_id);
    auto answer = [done, id = p.thread_id] {
      done(make_error(errc::invalid_request, "thread not loaded: " + id));
    };
    if (defer_reads)
      deferred.push_back(std::move(answer));
    else
      answer();
  }
  void thread_loaded_list(protocol::thread_loaded_list_params,
                          reply<protocol::thread_loaded_list_response> done) override {
    protocol::thread_loaded_list_response r;
    r.data = {"a", "b"};
    done(std::move(r));
  }
  void thread_list(protocol::thread_list_params,
                   reply<protocol::thread_list_response> done) override {
    done(protocol::thread_list_response{});
  }
  void thread_archive(protocol::thread_id_params p, bool archive,
                      reply<protocol::thread> done) override {
    events.push_back(std::string{archive ? "archive " : "unarchive "} + p.thread_id);
    protocol::thread t;
    t.id = p.thread_id;
    done(std::move(t));
  }
  void thread_goal(goal_request r, reply<goal_answer> done) override {
    events.push_back("goal " + r.params.thread_id);
    done(goal_answer{});
  }
  void thread_edit(parley::thread_edit e, reply<thread_edit_answer> done) override {
    events.push_back("edit " + e.thread_id);
    thread_edit_answer a;
    a.thread.id = e.thread_id;
    done(std::move(a));
  }
  void thread_delete(protocol::thread_id_params p, reply<atom::ok> done) override {
    events.push_back("delete " + p.thread_id);
    done(atom::ok::value);
  }
  void thread_name_set(protocol::thread_name_set_params p, reply<atom::ok> done) override {
    events.push_back("rename " + p.thread_id + " " + p.name.value_or("-"));
    done(atom::ok::value);
  }
  void thread_shell_command(protocol::thread_shell_command_params p,
                            reply<atom::ok> done) override {
    events.push_back("shell " + p.thread_id + " " + p.command + " timeout="
                     + (p.timeout_ms ? std::to_string(*p.timeout_ms) : "-"));
    done(atom::ok::value);
  }
  void thread_compact(protocol::thread_id_params p, reply<atom::ok> done) override {
    events.push_back("compact " + p.thread_id);
    done(atom::ok::value);
  }
  void review_start(protocol::review_start_params p,
                    reply<protocol::review_start_response> done) override {
    events.push_back("review " + p.thread_id);
    done(protocol::review_start_response{protocol::turn{}, p.thread_id});
  }
  void thread_unsubscribe(protocol::thread_id_params,
                          reply<protocol::thread_unsubscribe_response> done) override {
    done(protocol::thread_unsubscribe_response{"unsubscribed"});
  }
  void turn_start(protocol::turn_start_params p,
                  reply<protocol::turn_start_response> done) override {
    events.push_back("turn_start " + p.thread_id);
    // Answered later: the session must still reply exactly once.
    pending_turn = std::move(done);
  }
  void turn_interrupt(protocol::turn_interrupt_params p, reply<atom::ok> done) override {
    events.push_back("interrupt " + p.thread_id);
    done(atom::ok::value);
    if (pending_turn) {
      protocol::turn_start_response r;
      r.turn_.id = "turn-1";
      std::exchange(pending_turn, nullptr)(std::move(r));
    }
  }
  void turn_steer(protocol::turn_steer_params p,
                  reply<protocol::turn_steer_response> done) override {
    events.push_back("steer " + p.thread_id + " " + p.expected_turn_id);
    done(protocol::turn_steer_response{p.expected_turn_id});
  }
  void command_exec(protocol::command_exec_params p,
                    reply<protocol::command_exec_response> done) override {
    events.push_back("exec " + p.command.front());
    protocol::command_exec_response r;
    r.exit_code = 0;
    r.stdout_text = "out";
    done(std::move(r));
  }
  void command_exec_write(std::string id, std::string bytes, bool close,
                          reply<atom::ok> done) override {
    events.push_back("exec_write " + id + " " + bytes + (close ? " close" : ""));
    done(atom::ok::value);
  }
  void command_exec_terminate(std::string id, reply<atom::ok> done) override {
    events.push_back("exec_terminate " + id);
    done(atom::ok::value);
  }
  void command_exec_resize(std::string id, protocol::terminal_size size,
                           reply<atom::ok> done) override {
    events.push_back("exec_resize " + id + " " + std::to_string(size.rows) + "x"
                     + std::to_string(size.cols));
    done(atom::ok::value);
  }
  void debug_counts(reply<runtime_counts> done) override { done(runtime_counts{}); }
  json approval_stats() override { return json{{"asked", 0}}; }

  reply<protocol::turn_start_response> pending_turn;
  /// thread/read answered when the test says (answer_next), in order.
  bool defer_reads = false;
  std::deque<std::function<void()>> deferred;
  void answer_next() {
    auto next = std::move(deferred.front());
    deferred.pop_front();
    next();
  }
};

/// Whether `actual` has everything `expected` names.
bool matches(const json& expected, const json& actual) {
  if (expected.is_object()) {
    if (!actual.is_object()) return false;
    for (auto& [key, value] : expected.items()) {
      auto i = actual.find(key);
      if (i == actual.end() || !matches(value, *i)) return false;
    }
    return true;
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.size() != expected.size()) return false;
    for (size_t i = 0; i < expected.size(); ++i)
      if (!matches(expected[i], actual[i])) return false;
    return true;
  }
  return expected == actual;
}

approval_ask make_ask(uint64_t key, const std::string& kind, const std::string& thread,
                      const std::string& turn, const std::string& item) {
  approval_ask a;
  a.key = key;
  a.thread_id = thread;
  a.digest = "sha256:d" + std::to_string(key);
  a.cwd = "/w";
  if (kind == "file") {
    a.what = hooks::action_kind::file_change;
    a.file.thread_id = thread;
    a.file.turn_id = turn;
    a.file.item_id = item;
  } else {
    a.raw_command = "ls";
    a.command.thread_id = thread;
    a.command.turn_id = turn;
    a.command.item_id = item;
    a.command.command = "ls";
  }
  return a;
}

void run_transcript(const std::string& name) {
  std::ifstream in(std::string{PARLEY_TRANSCRIPTS} + "/" + name);
  ASSERT_TRUE(in) << name;
  std::deque<std::string> written;
  std::deque<std::string> events;
  fake_runtime runtime{events};
  int64_t next_id = 0;
  session_config cfg;
  cfg.cli_version = "0.169.0";
  cfg.codex_home = "/home";
  cfg.model_id = "scripted";
  cfg.next_request_id = [&] { return next_id++; };
  cfg.on_refused_reply = [&] { events.push_back("refused"); };
  session s{cfg, runtime, [&](std::string line) { written.push_back(std::move(line)); }};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    SCOPED_TRACE(name + ":" + std::to_string(n) + ": " + line);
    if (line.empty() || line[0] == '#') continue;
    auto op = line.substr(0, 2);
    auto rest = line.size() > 3 ? line.substr(3) : std::string{};
    if (op == "->") {
      s.on_line(rest);
    } else if (op == "<-") {
      ASSERT_FALSE(written.empty()) << "no line written";
      auto actual = json::parse(written.front());
      written.pop_front();
      EXPECT_TRUE(matches(json::parse(rest), actual)) << "wrote " << actual.dump();
    } else if (op == "<=") {
      ASSERT_FALSE(events.empty()) << "no runtime event";
      if (!rest.empty() && rest.back() == '*')  // a prefix
        EXPECT_EQ(events.front().substr(0, rest.size() - 1), rest.substr(0, rest.size() - 1));
      else
        EXPECT_EQ(events.front(), rest);
      events.pop_front();
    } else if (line.rfind("!ask ", 0) == 0) {
      std::istringstream words(line.substr(5));
      uint64_t key = 0;
      std::string kind, thread, turn, item;
      words >> key >> kind >> thread >> turn >> item;
      s.ask(make_ask(key, kind, thread, turn, item),
            [&events, key](caf::expected<protocol::approval_decision> d) {
              events.push_back("decision " + std::to_string(key) + " "
                               + (d ? protocol::to_string(d->value)
                                  : "error " + to_string(static_cast<errc>(d.error().code()))));
            });
    } else if (line.rfind("!withdraw ", 0) == 0) {
      s.withdraw(std::stoull(line.substr(10)));
    } else if (line == "!eof") {
      s.on_eof();
    } else {
      FAIL() << "unknown transcript line";
    }
  }
  EXPECT_TRUE(written.empty()) << "unexpected line: " << (written.empty() ? "" : written.front());
  EXPECT_TRUE(events.empty()) << "unexpected event: " << (events.empty() ? "" : events.front());
}

TEST(RpcSession, Initialize) { run_transcript("initialize.txt"); }
TEST(RpcSession, Methods) { run_transcript("methods.txt"); }
TEST(RpcSession, Approvals) { run_transcript("approvals.txt"); }
TEST(RpcSession, LegacyApprovals) { run_transcript("legacy_approvals.txt"); }
TEST(RpcSession, InputEnds) { run_transcript("eof.txt"); }

TEST(RpcSession, ARuntimeReplyAfterTheSessionIsGoneIsDropped) {
  std::deque<std::string> events;
  fake_runtime runtime{events};
  std::vector<std::string> written;
  session_config cfg;
  cfg.next_request_id = [] { return int64_t{0}; };
  {
    session s{cfg, runtime, [&](std::string l) { written.push_back(std::move(l)); }};
    s.on_line(R"({"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}})");
    s.on_line(R"({"id":2,"method":"turn/start","params":{"threadId":"t","input":[]}})");
  }
  ASSERT_TRUE(runtime.pending_turn);
  runtime.pending_turn(protocol::turn_start_response{});
  EXPECT_EQ(written.size(), 1u);  // only initialize's reply
}

/// A session whose runtime answers thread/read when the test says, with
/// three more reads sent than it may have unanswered: the last three wait.
struct session_past_its_limit {
  std::deque<std::string> events;
  fake_runtime runtime{events};
  std::vector<std::string> written;
  std::unique_ptr<session> s;
  static constexpr long limit = session::max_unanswered;

  session_past_its_limit() {
    runtime.defer_reads = true;
    session_config cfg;
    cfg.next_request_id = [] { return int64_t{0}; };
    s = std::make_unique<session>(cfg, runtime,
                                  [this](std::string l) { written.push_back(std::move(l)); });
    s->on_line(
        R"({"id":0,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}})");
    for (long i = 0; i < limit + 3; ++i) s->on_line(read(i));
  }
  static std::string read(long i) {
    return R"({"id":)" + std::to_string(i + 1) + R"(,"method":"thread/read","params":{"threadId":"t)"
           + std::to_string(i) + R"("}})";
  }
  long reads() const {
    return std::count_if(events.begin(), events.end(),
                         [](auto& e) { return e.rfind("thread_read ", 0) == 0; });
  }
};

TEST(RpcSession, RequestsPastTheUnansweredLimitWaitInOrderForRoom) {
  session_past_its_limit p;
  const long limit = p.limit;
  auto& s = *p.s;
  EXPECT_EQ(p.reads(), limit);  // the last three wait
  EXPECT_EQ(s.unanswered(), limit);
  // A line that is no request (an answer to a server request) is not held.
  s.on_line(R"({"id":77,"result":{}})");
  // Each answer makes room for the next request, in the client's order.
  p.runtime.answer_next();
  EXPECT_EQ(p.reads(), limit + 1);
  EXPECT_EQ(p.events.back(), "thread_read t" + std::to_string(limit));
  bool ended = false;
  s.after_held([&] { ended = true; });  // the input's end waits for the held lines
  p.runtime.answer_next();
  EXPECT_FALSE(ended);
  p.runtime.answer_next();
  EXPECT_TRUE(ended);
  EXPECT_EQ(p.reads(), limit + 3);
  EXPECT_EQ(p.events.back(), "thread_read t" + std::to_string(limit + 2));
  while (!p.runtime.deferred.empty()) p.runtime.answer_next();
  EXPECT_EQ(s.unanswered(), 0);
  EXPECT_EQ(p.written.size(), size_t(limit + 3 + 1));  // one reply each, and initialize's
}

// A client the server gave up on (too far behind in reading) has nothing
// more of its run: neither the requests held for room, nor a later line.
TEST(RpcSession, AGivenUpClientsHeldRequestsAreNotRun) {
  session_past_its_limit p;
  const long limit = p.limit;
  auto& s = *p.s;
  ASSERT_EQ(p.reads(), limit);  // three held
  bool ended = false;
  s.after_held([&] { ended = true; });
  EXPECT_EQ(s.give_up(), 3u);
  EXPECT_TRUE(s.given_up());
  s.on_line(p.read(limit + 3));  // after: not even held
  while (!p.runtime.deferred.empty()) p.runtime.answer_next();
  EXPECT_EQ(p.reads(), limit);
  EXPECT_FALSE(ended);  // the caller ends the input itself
  EXPECT_EQ(s.unanswered(), 0);
}

// -- cluster routing (transport/session_router.hpp) ---------------------------------------

/// Says where threads live and records what the session hands it.
class fake_router final : public session_router {
 public:
  std::map<std::string, std::string> owners;  // thread -> node ("" or absent: here)
  std::string place_on = "n2";
  bool defer = false;  // lookups answered when the test says
  std::vector<std::function<void()>> later;
  std::vector<std::string> forwarded;  // "node|thread|id|line"
  std::vector<std::string> answers;
  std::string initialize_line;
  bool closed = false;

  void locate(const std::string& thread_id, located then) override {
    auto i = owners.find(thread_id);
    auto node = i == owners.end() ? std::string{} : i->second;
    if (defer)
      later.push_back([then, node] { then(node); });
    else
      then(node);
  }
  void place(placed then) override { then("01a21833-d75a-7951-aa2a-fa949722f166", place_on); }
  void forward(const std::string& node, const std::string& thread_id,
               const std::string& request_id_json, std::string line) override {
    forwarded.push_back(node + "|" + thread_id + "|" + request_id_json + "|" + line);
  }
  bool forward_answer(int64_t request_id, std::string line) override {
    if ((request_id >> 40) == 0) return false;  // this node's own
    answers.push_back(std::move(line));
    return true;
  }
  void client_initialized(std::string line) override { initialize_line = std::move(line); }
  void client_closed() override { closed = true; }
  bool stats_ok = true;
  std::string stats_text = R"({"nodes":[{"node":"n1"},{"node":"n2"}],"totals":{"nodes":2}})";
  void cluster_stats(stats_ready then) override { then(stats_ok, stats_text); }
};

struct routed_session {
  std::deque<std::string> events;
  fake_runtime runtime{events};
  std::vector<std::string> written;
  std::shared_ptr<fake_router> router = std::make_shared<fake_router>();
  std::unique_ptr<session> s;
  explicit routed_session(bool with_router = true, bool peer = false) {
    session_config cfg;
    cfg.next_request_id = [] { return int64_t{0}; };
    cfg.on_refused_reply = [this] { events.push_back("refused"); };
    if (with_router) cfg.router = router;
    cfg.cluster_peer = peer;
    s = std::make_unique<session>(cfg, runtime,
                                  [this](std::string l) { written.push_back(std::move(l)); });
    s->on_line(R"({"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}})");
  }
  /// #2 reads a thread of node n3 (its lookup answered when the test says),
  /// then #3 asks what is loaded here: #3 waits behind #2's lookup.
  void hold_a_line_behind_a_lookup(const std::string& remote) {
    router->defer = true;
    router->owners[remote] = "n3";
    s->on_line(std::string{R"({"id":2,"method":"thread/read","params":{"threadId":")"} + remote
               + R"("}})");
    s->on_line(R"({"id":3,"method":"thread/loaded/list","params":{}})");
  }
};

constexpr const char* remote_thread = "01a21833-d74d-7825-9415-131134a6a03f";
constexpr const char* local_thread = "01a21833-d766-7cfc-b42d-94fe0288c975";

TEST(RpcSessionRouting, ARequestForARemoteThreadGoesThereAsItIs) {
  routed_session r;
  EXPECT_NE(r.router->initialize_line.find("\"initialize\""), std::string::npos);
  r.router->owners[remote_thread] = "n2";
  std::string line = std::string{R"({"id":7,"method":"thread/read","params":{"threadId":")"}
                     + remote_thread + R"(","includeTurns":true}})";
  r.s->on_line(line);
  ASSERT_EQ(r.router->forwarded.size(), 1u);
  EXPECT_EQ(r.router->forwarded[0], std::string{"n2|"} + remote_thread + "|7|" + line);
  EXPECT_TRUE(r.events.empty());  // not run here
  r.s->on_line(std::string{R"({"id":8,"method":"thread/read","params":{"threadId":")"}
               + local_thread + R"("}})");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0], std::string{"thread_read "} + local_thread);
}

TEST(RpcSessionRouting, LinesAfterALookupWaitForItSoTheClientsOrderHolds) {
  routed_session r;
  r.hold_a_line_behind_a_lookup(remote_thread);
  EXPECT_TRUE(r.router->forwarded.empty());
  EXPECT_EQ(r.written.size(), 1u);  // initialize's reply only: #3 waits
  ASSERT_EQ(r.router->later.size(), 1u);
  r.router->later[0]();
  ASSERT_EQ(r.router->forwarded.size(), 1u);
  ASSERT_EQ(r.written.size(), 2u);  // then #3, answered here
  EXPECT_NE(r.written[1].find("\"id\":3"), std::string::npos);
}

// A request held for its lookup when the client is given up on is not run
// when the lookup answers, nor is the line held behind it.
TEST(RpcSessionRouting, AGivenUpClientsLookupRunsNothing) {
  routed_session r;
  r.hold_a_line_behind_a_lookup(remote_thread);
  ASSERT_EQ(r.router->later.size(), 1u);
  EXPECT_EQ(r.s->give_up(), 1u);  // #3
  r.router->later[0]();
  EXPECT_TRUE(r.router->forwarded.empty());
  EXPECT_EQ(r.written.size(), 1u);  // initialize's reply only
}

// A client's answer does not wait behind a request held for a lookup (issue
// 23): only requests keep the client's order.
TEST(RpcSessionRouting, AnAnswerOvertakesARequestHeldForItsLookup) {
  routed_session r;
  r.router->defer = true;
  r.router->owners[remote_thread] = "n3";
  r.s->on_line(std::string{R"({"id":2,"method":"thread/read","params":{"threadId":")"}
               + remote_thread + R"("}})");
  auto theirs = (int64_t{2} << 40) + 5;
  r.s->on_line(R"({"id":)" + std::to_string(theirs) + R"(,"result":{"decision":"accept"}})");
  r.s->on_line(R"({"id":3,"method":"thread/loaded/list","params":{}})");
  ASSERT_EQ(r.router->answers.size(), 1u);  // handled at once, the lookup still out
  EXPECT_TRUE(r.router->forwarded.empty());
  EXPECT_EQ(r.written.size(), 1u);  // initialize's reply only: #3 still waits
  ASSERT_EQ(r.router->later.size(), 1u);
  r.router->later[0]();
  EXPECT_EQ(r.router->forwarded.size(), 1u);
  ASSERT_EQ(r.written.size(), 2u);
  EXPECT_NE(r.written[1].find("\"id\":3"), std::string::npos);
}

TEST(RpcSessionRouting, ANewThreadIsPlacedAndItsIdTravelsOnlyFromAPeer) {
  routed_session r;
  r.s->on_line(R"({"id":4,"method":"thread/start","params":{}})");
  ASSERT_EQ(r.router->forwarded.size(), 1u);
  EXPECT_NE(r.router->forwarded[0].find(
                R"("parley.threadId":"01a21833-d75a-7951-aa2a-fa949722f166")"),
            std::string::npos);
  r.router->place_on = "";  // here: started under the placed id
  r.s->on_line(R"({"id":5,"method":"thread/start","params":{}})");
  EXPECT_EQ(r.runtime.assigned, "01a21833-d75a-7951-aa2a-fa949722f166");

  // A client may not choose a thread's id; a peer node may.
  routed_session client{false, false};
  client.s->on_line(
      R"({"id":2,"method":"thread/start","params":{"parley.threadId":"01a21833-d75a-7951-aa2a-fa949722f166"}})");
  EXPECT_EQ(client.runtime.assigned, "");
  routed_session peer{false, true};
  peer.s->on_line(
      R"({"id":2,"method":"thread/start","params":{"parley.threadId":"01a21833-d75a-7951-aa2a-fa949722f166"}})");
  EXPECT_EQ(peer.runtime.assigned, "01a21833-d75a-7951-aa2a-fa949722f166");
}

TEST(RpcSessionRouting, AnAnswerGoesToTheNodeThatAsked) {
  routed_session r;
  auto theirs = (int64_t{2} << 40) + 5;
  r.s->on_line(R"({"id":)" + std::to_string(theirs) + R"(,"result":{"decision":"accept"}})");
  ASSERT_EQ(r.router->answers.size(), 1u);
  r.s->on_line(R"({"id":3,"result":{"decision":"accept"}})");  // ours, unknown: refused here
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0], "refused");
  r.s->on_eof();
  EXPECT_TRUE(r.router->closed);
}

TEST(RpcSessionRouting, StatsOfAClusterNodeCarryEveryMembersFigures) {
  routed_session r;
  r.s->on_line(R"({"id":9,"method":"parley/stats"})");
  ASSERT_EQ(r.written.size(), 2u);
  auto reply = json::parse(r.written[1]);
  EXPECT_TRUE(reply["result"].contains("approvals"));  // this node's, as before
  EXPECT_EQ(reply["result"]["cluster"]["nodes"].size(), 2u);
  // Figures that could not be had say why, and the reply still comes.
  r.router->stats_ok = false;
  r.router->stats_text = "timed out";
  r.s->on_line(R"({"id":10,"method":"parley/stats"})");
  ASSERT_EQ(r.written.size(), 3u);
  EXPECT_EQ(json::parse(r.written[2])["result"]["cluster"]["error"], "timed out");
  // Without a cluster: no "cluster" at all.
  routed_session single{false};
  single.s->on_line(R"({"id":9,"method":"parley/stats"})");
  EXPECT_FALSE(json::parse(single.written.back())["result"].contains("cluster"));
}

}  // namespace
}  // namespace parley::rpc
