// The router's pure parts: where rendezvous hashing puts a thread, and how
// the members' figures add up for the cluster's parley/stats.

#include "actors/cluster/thread_router.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "protocol/ids.hpp"

namespace parley::cluster {
namespace {

using nlohmann::json;

TEST(RendezvousOwner, ANodeLeavingMovesOnlyTheThreadsItHeld) {
  std::vector<std::string> three{"n1", "n2", "n3"}, two{"n1", "n2"};
  std::map<std::string, int> per_node;
  for (int i = 0; i < 3000; ++i) {
    auto id = protocol::new_uuid_v7();
    auto before = rendezvous_owner(id, three);
    ++per_node[before];
    auto after = rendezvous_owner(id, two);
    if (before != "n3") {
      EXPECT_EQ(after, before) << id;
    }
    EXPECT_EQ(rendezvous_owner(id, {"n3", "n2", "n1"}), before) << "the order of nodes matters not";
  }
  for (const auto& n : three) EXPECT_GT(per_node[n], 800) << n << " gets its share";
}

TEST(ClusterStats, CountsAddUpOverTheMembersThatAnswered) {
  std::vector<json> nodes{
      json{{"node", "n2"}, {"reachable", true}, {"loadedThreads", 3}, {"takenOver", 1},
           {"approvals", {{"requested", 5}, {"decided", 4}, {"p50_ms", 1.5}}}},
      json{{"node", "n3"}, {"reachable", false}, {"error", "not linked"}},
      json{{"node", "n1"}, {"reachable", true}, {"loadedThreads", 2},
           {"approvals", {{"requested", 1}, {"decided", 1}, {"p50_ms", 0.5}}}}};
  auto out = cluster_stats_of(nodes);
  ASSERT_EQ(out["nodes"].size(), 3u);
  EXPECT_EQ(out["nodes"][0]["node"], "n1");  // by name
  EXPECT_EQ(out["nodes"][2]["error"], "not linked");
  EXPECT_EQ(out["totals"]["nodes"], 3);
  EXPECT_EQ(out["totals"]["reachable"], 2);
  EXPECT_EQ(out["totals"]["loadedThreads"], 5);
  EXPECT_EQ(out["totals"]["takenOver"], 1);
  EXPECT_EQ(out["totals"]["approvals"]["requested"], 6);
  EXPECT_EQ(out["totals"]["approvals"]["decided"], 5);
  EXPECT_FALSE(out["totals"]["approvals"].contains("p50_ms"));  // percentiles do not add up
}

}  // namespace
}  // namespace parley::cluster
