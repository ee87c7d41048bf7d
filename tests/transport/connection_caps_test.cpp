// The listeners' connection caps: in all, not yet upgraded, and not yet
// upgraded per peer address (issue 25).

#include "transport/connection_caps.hpp"

#include <gtest/gtest.h>

namespace parley::ws {
namespace {

TEST(ConnectionCaps, each_cap_refuses_past_its_count_and_frees_on_leaving) {
  connection_caps caps{{/*connections=*/5, /*pending=*/3, /*pending_per_address=*/2}};
  EXPECT_EQ(caps.admit("10.0.0.1"), cap::none);
  EXPECT_EQ(caps.admit("10.0.0.1"), cap::none);
  EXPECT_EQ(caps.admit("10.0.0.1"), cap::pending_per_address);
  EXPECT_EQ(caps.admit("10.0.0.2"), cap::none);  // another address still gets in
  EXPECT_EQ(caps.admit("10.0.0.3"), cap::pending);
  EXPECT_EQ(caps.pending(), 3u);
  // Upgraded connections no longer count as pending, only in all.
  caps.upgraded("10.0.0.1");
  caps.upgraded("10.0.0.1");
  EXPECT_EQ(caps.admit("10.0.0.1"), cap::none);
  EXPECT_EQ(caps.admit("10.0.0.3"), cap::none);
  EXPECT_EQ(caps.connections(), 5u);
  EXPECT_EQ(caps.admit("10.0.0.4"), cap::connections);
  caps.left("10.0.0.1", /*was_upgraded=*/true);
  EXPECT_EQ(caps.admit("10.0.0.4"), cap::pending);  // 3 still pending
  caps.left("10.0.0.3", /*was_upgraded=*/false);
  EXPECT_EQ(caps.admit("10.0.0.4"), cap::none);
  EXPECT_EQ(caps.connections(), 4u);
  EXPECT_EQ(caps.pending(), 3u);
}

TEST(ConnectionCaps, unix_socket_peers_have_no_per_address_cap) {
  connection_caps caps{{0, 0, 1}};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(caps.admit(""), cap::none);
}

TEST(ConnectionCaps, defaults_follow_the_open_files_limit) {
  auto l = default_cap_limits(256);
  EXPECT_EQ(l.connections, 128u);
  EXPECT_EQ(l.pending, 64u);
  EXPECT_EQ(l.pending_per_address, 32u);
  auto tiny = default_cap_limits(4);
  EXPECT_GE(tiny.connections, 8u);
  EXPECT_GE(tiny.pending_per_address, 2u);
}

}  // namespace
}  // namespace parley::ws
