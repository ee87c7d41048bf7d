// --listen values as Codex spells them.

#include "transport/listen_address.hpp"

#include <gtest/gtest.h>

namespace parley::ws {
namespace {

TEST(ListenAddress, every_form_codex_accepts) {
  std::string error;
  auto tcp = parse_listen_address("ws://127.0.0.1:4500", "/home/p", error);
  ASSERT_TRUE(tcp);
  EXPECT_EQ(tcp->what, listen_address::kind::tcp);
  EXPECT_EQ(tcp->host, "127.0.0.1");
  EXPECT_EQ(tcp->port, 4500);
  EXPECT_TRUE(tcp->loopback());
  auto v6 = parse_listen_address("ws://[::1]:0", "/home/p", error);
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_TRUE(v6->loopback());
  auto unix_default = parse_listen_address("unix://", "/home/p", error);
  ASSERT_TRUE(unix_default);
  EXPECT_EQ(unix_default->path, "/home/p/app-server.sock");
  EXPECT_EQ(parse_listen_address("unix:///run/x.sock", "/home/p", error)->path, "/run/x.sock");
  EXPECT_EQ(parse_listen_address("stdio://", "/home/p", error)->what, listen_address::kind::stdio);
}

TEST(ListenAddress, what_is_not_an_address_says_why) {
  std::string error;
  EXPECT_FALSE(parse_listen_address("ws://127.0.0.1", "/h", error));
  EXPECT_NE(error.find("ws://HOST:PORT"), std::string::npos);
  EXPECT_FALSE(parse_listen_address("ws://127.0.0.1:99999", "/h", error));
  EXPECT_FALSE(parse_listen_address("tcp://x:1", "/h", error));
  auto wide = parse_listen_address("ws://0.0.0.0:1", "/h", error);
  ASSERT_TRUE(wide);
  EXPECT_FALSE(wide->loopback());
}

TEST(ListenAddress, wss_is_tcp_with_tls) {
  std::string error;
  auto tls = parse_listen_address("wss://[::1]:4443", "/h", error);
  ASSERT_TRUE(tls);
  EXPECT_EQ(tls->what, listen_address::kind::tcp);
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->host, "::1");
  EXPECT_EQ(tls->port, 4443);
  EXPECT_FALSE(parse_listen_address("ws://127.0.0.1:1", "/h", error)->tls);
  EXPECT_FALSE(parse_listen_address("wss://127.0.0.1", "/h", error));
  EXPECT_NE(error.find("wss://HOST:PORT"), std::string::npos);
}

}  // namespace
}  // namespace parley::ws
