// Node links over real TLS on loopback: actor systems in this process (each
// with its own middleman) and, for a node that is stopped or killed, one in
// a child process. No timing is asserted tighter than "within the
// connection timeout plus a generous margin" (timing goals are bench/'s).

#include "actors/cluster/node_link.hpp"
#include "actors/cluster/node_types.hpp"

#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/scoped_actor.hpp>
#include <gtest/gtest.h>
#include <signal.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "actors/core/log.hpp"
#include "actors/runtime/runtime.hpp"
#include "tests/actors/cluster/cluster_fixture.hpp"
#include "tests/actors/cluster/echo_node.hpp"

namespace parley::cluster {
namespace {

using namespace std::chrono_literals;
using testing::cluster_file_spec;
using testing::echo_node;

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit = 10s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return pred();
}

std::vector<std::string> names_of(const peer_map& peers) {
  std::vector<std::string> out;
  for (auto& [name, handle] : peers) out.push_back(name);
  return out;
}

class NodeLinkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tls = new testing::tls_material;
    log_lines = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(2000);
    log::get().sinks().push_back(log_lines);
  }
  static void TearDownTestSuite() {
    auto& sinks = log::get().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), log_lines), sinks.end());
    delete tls;
  }
  static bool logged(const std::string& text) {
    for (auto& line : log_lines->last_formatted())
      if (line.find(text) != std::string::npos) return true;
    return false;
  }

  void SetUp() override {
    for (auto& m : members) m.port = testing::free_port();
  }
  // node's config straight from a cluster file (so it is checked as a node's is).
  std::shared_ptr<const cluster_config> config_of(const std::string& node,
                                                  cluster_file_spec spec = {}) {
    spec.node = node;
    spec.members = members;
    auto path = testing::write_cluster_file(tls->dir(), node + ".toml", spec);
    std::string error;
    auto c = load_cluster_config(path, error);
    if (!c) throw std::runtime_error(error);
    return std::make_shared<const cluster_config>(std::move(*c));
  }

  static testing::tls_material* tls;
  static std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_lines;
  std::vector<testing::file_member> members{{"n1", 0}, {"n2", 0}, {"n3", 0}};
};
testing::tls_material* NodeLinkTest::tls = nullptr;
std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> NodeLinkTest::log_lines;

TEST_F(NodeLinkTest, ThreeNodesLinkBothWaysAndServeSessionsAndStats) {
  echo_node n1{config_of("n1")}, n2{config_of("n2")}, n3{config_of("n3")};
  EXPECT_EQ(n1.wait_listening(), members[0].port);
  n2.wait_listening();
  n3.wait_listening();
  using names = std::vector<std::string>;
  EXPECT_TRUE(eventually([&] { return names_of(n1.peers()) == names{"n2", "n3"}; }));
  EXPECT_TRUE(eventually([&] { return names_of(n2.peers()) == names{"n1", "n3"}; }));
  EXPECT_TRUE(eventually([&] { return names_of(n3.peers()) == names{"n1", "n2"}; }));

  // n1 opens a session on n3 for one of its clients; lines go both ways.
  auto n3_from_n1 = n1.peers().at("n3");
  caf::scoped_actor self{n1.system()};
  auto relay = caf::actor_cast<session_relay_actor>(self);
  remote_session_actor session;
  self->request(n3_from_n1, 5s, atom::open::value,
                session_open{"n1", "test client via n1", "{}", false, "default", "test", false,
                             false},
                relay)
      .receive([&session](remote_session_actor& s) { session = std::move(s); },
               [&](caf::error& err) { FAIL() << n1.system().render(err); });
  ASSERT_TRUE(session);
  self->send(session, atom::line::value, std::string{"hello"});
  std::string echoed;
  self->receive([&echoed](atom::line, const std::string& line) { echoed = line; },
                caf::after(5s) >> [] {});
  EXPECT_EQ(echoed, "echo: hello");
  self->send(session, atom::eof::value);
  bool closed = false;
  self->receive([&closed](atom::close) { closed = true; }, caf::after(5s) >> [] {});
  EXPECT_TRUE(closed);

  std::string stats;
  self->request(n1.peers().at("n2"), 5s, atom::stats::value)
      .receive([&stats](std::string& s) { stats = s; },
               [&](caf::error& err) { FAIL() << n1.system().render(err); });
  EXPECT_EQ(stats, "{\"node\":\"n2\"}");
}

TEST_F(NodeLinkTest, WatcherHearsPeerUpAndLost) {
  auto n1 = std::make_unique<echo_node>(config_of("n1"));
  caf::scoped_actor watcher{n1->system()};
  watcher->send(n1->link(), link_atom::watch::value,
                caf::actor_cast<peer_watcher_actor>(watcher));
  {
    echo_node n2{config_of("n2")};
    std::string up;
    watcher->receive([&up](link_atom::peer_up, const std::string& name, const node_actor&) {
      up = name;
    },
                     caf::after(10s) >> [] {});
    EXPECT_EQ(up, "n2");
  }  // n2 stops: its connections close
  std::string lost, why;
  watcher->receive(
      [&](link_atom::peer_lost, const std::string& name, const std::string& reason) {
        lost = name;
        why = reason;
      },
      caf::after(10s) >> [] {});
  // remote_link_unreachable, or user_shutdown when n2's node_actor stopped
  // before its connections closed.
  EXPECT_EQ(lost, "n2") << why;
}

TEST_F(NodeLinkTest, PeerWithCertificateOfAnotherCaIsRefusedBothWays) {
  echo_node n1{config_of("n1")};
  n1.wait_listening();
  // n2 trusts the cluster CA but presents a certificate of another CA (built
  // by hand: the cluster file loader would refuse it).
  auto rogue = std::make_shared<cluster_config>(*config_of("n2"));
  rogue->cert_file = tls->path("rogue.pem");
  rogue->key_file = tls->path("rogue.key");
  echo_node n2{rogue};
  n2.wait_listening();
  // n3 has a certificate of the other CA and trusts only that CA.
  cluster_file_spec other;
  other.ca = "other-ca.pem";
  other.cert = "rogue.pem";
  other.key = "rogue.key";
  echo_node n3{config_of("n3", other)};
  n3.wait_listening();
  // Several attempts each way (backoff from 100 ms, capped at 1 s).
  std::this_thread::sleep_for(3s);
  EXPECT_TRUE(n1.peers().empty()) << "n1 accepted a peer without a cluster certificate";
  EXPECT_TRUE(n2.peers().empty()) << "n2 was accepted without a cluster certificate";
  EXPECT_TRUE(n3.peers().empty());
  EXPECT_TRUE(logged("event=peer_refused node=n1 peer=n2"));
  EXPECT_TRUE(logged("event=peer_refused node=n1 peer=n3"));
}

TEST_F(NodeLinkTest, PeerWithoutCertificateOrWithoutTlsIsRefused) {
  echo_node n1{config_of("n1")};
  auto port = n1.wait_listening();
  auto try_connect = [port](caf::actor_system& sys, const caf::io::middleman_actor& mm) {
    caf::scoped_actor self{sys};
    std::string outcome = "no answer";
    self->request(mm, 5s, caf::connect_atom::value, std::string{"127.0.0.1"}, port)
        .receive(
            [&outcome](caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>&) {
              outcome = ptr ? "connected" : "no actor";
            },
            [&](caf::error& err) { outcome = sys.render(err); });
    return outcome;
  };
  {
    // Plain BASP over TCP (no TLS at all): the configured port speaks only TLS.
    caf::actor_system_config cfg;
    configure_scheduler(cfg, 1);
    cfg.load<caf::io::middleman>();
    cfg.set("middleman.app-identifiers", std::vector<std::string>{"parley:test"});
    register_cluster_types(cfg);
    caf::actor_system sys{cfg};
    auto outcome = try_connect(sys, sys.middleman().actor_handle());
    EXPECT_NE(outcome, "connected") << outcome;
  }
  {
    // TLS without a certificate (CAF then offers anonymous ciphers only).
    caf::actor_system_config cfg;
    configure_scheduler(cfg, 1);
    cfg.load<caf::io::middleman>();
    cfg.load<caf::openssl::manager>();
    cfg.set("middleman.app-identifiers", std::vector<std::string>{"parley:test"});
    register_cluster_types(cfg);
    caf::actor_system sys{cfg};
    auto outcome = try_connect(sys, sys.openssl_manager().actor_handle());
    EXPECT_NE(outcome, "connected") << outcome;
  }
  EXPECT_TRUE(n1.peers().empty());
}

TEST_F(NodeLinkTest, PeerOfAnotherMessageTableIsRefusedWithAClearError) {
  echo_node n1{config_of("n1")}, n2{config_of("n2")};
  echo_node n3{config_of("n3"), "0123456789abcdef-another-build"};
  using names = std::vector<std::string>;
  EXPECT_TRUE(eventually([&] { return names_of(n1.peers()) == names{"n2"}; }));
  EXPECT_TRUE(eventually([&] { return names_of(n2.peers()) == names{"n1"}; }));
  EXPECT_TRUE(eventually([&] { return logged("event=peer_refused node=n1 peer=n3"); }));
  EXPECT_TRUE(eventually([&] { return logged("another parley build"); }));
  EXPECT_TRUE(eventually([&] { return logged("event=hello_refused node=n3 peer=n1"); }));
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(n3.peers().empty());
  EXPECT_EQ(names_of(n1.peers()), names{"n2"});
}

TEST_F(NodeLinkTest, FingerprintCoversTheInterfaces) {
  echo_node n1{config_of("n1")};
  auto a = message_table_fingerprint(n1.system());
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a, message_table_fingerprint(n1.system()));
  // An actor system without the cluster's types names them differently.
  caf::actor_system_config cfg;
  configure_scheduler(cfg, 1);
  caf::actor_system bare{cfg};
  EXPECT_NE(a, message_table_fingerprint(bare));
}

// A child process running one echo node; stopped, continued and killed.
class child_node {
 public:
  child_node(const std::string& file, const std::string& node) {
    int to_child[2], from_child[2];
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(to_child[0], 0);
      ::dup2(from_child[1], 1);
      ::close(to_child[1]);
      ::close(from_child[0]);
      ::execl(PARLEY_CLUSTER_ECHO_NODE, PARLEY_CLUSTER_ECHO_NODE, file.c_str(), node.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    stdin_ = to_child[1];
    out_ = ::fdopen(from_child[0], "r");
  }
  ~child_node() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::close(stdin_);
    ::fclose(out_);
  }
  std::string first_line() {
    char buf[256] = {};
    return ::fgets(buf, sizeof buf, out_) ? buf : "";
  }
  void signal(int sig) { ::kill(pid_, sig); }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  FILE* out_ = nullptr;
};

TEST_F(NodeLinkTest, StoppedOrKilledPeerIsNoticedAndAReturningOneRelinks) {
  auto n1 = config_of("n1");  // heartbeat 200 ms, connection timeout 1 s
  echo_node local{n1};
  cluster_file_spec spec;
  spec.node = "n2";
  spec.members = members;
  auto file = testing::write_cluster_file(tls->dir(), "child.toml", spec);
  child_node n2{file, "n2"};
  ASSERT_EQ(n2.first_line().rfind("listening ", 0), 0u);
  caf::scoped_actor watcher{local.system()};
  watcher->send(local.link(), link_atom::watch::value, caf::actor_cast<peer_watcher_actor>(watcher));
  auto next = [&watcher](std::string& event, std::string& why) {
    event.clear();
    watcher->receive(
        [&event](link_atom::peer_up, const std::string& name, const node_actor&) {
          event = "up " + name;
        },
        [&](link_atom::peer_lost, const std::string& name, const std::string& reason) {
          event = "lost " + name;
          why = reason;
        },
        caf::after(15s) >> [] {});
  };
  std::string event, why;
  next(event, why);
  ASSERT_EQ(event, "up n2");

  // Frozen: no FIN, no RST; only the heartbeat's silence tells.
  n2.signal(SIGSTOP);
  auto stopped_at = std::chrono::steady_clock::now();
  next(event, why);
  auto noticed_after = std::chrono::steady_clock::now() - stopped_at;
  EXPECT_EQ(event, "lost n2") << why;
  EXPECT_LT(noticed_after, n1->connection_timeout + 5s);

  n2.signal(SIGCONT);
  next(event, why);
  EXPECT_EQ(event, "up n2");

  n2.signal(SIGKILL);
  next(event, why);
  EXPECT_EQ(event, "lost n2");
  EXPECT_NE(why.find("remote_link_unreachable"), std::string::npos) << why;
}

}  // namespace
}  // namespace parley::cluster
