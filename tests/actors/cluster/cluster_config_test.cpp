// The cluster file: what a valid one gives, and a clear "FILE:LINE:COL: key:
// what" for each way one can be wrong.

#include "actors/cluster/cluster_config.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/actors/cluster/cluster_fixture.hpp"

namespace parley::cluster {
namespace {

using testing::cluster_file_spec;
using testing::write_cluster_file;

class ClusterConfigTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tls = new testing::tls_material; }
  static void TearDownTestSuite() { delete tls; }
  static testing::tls_material* tls;

  cluster_file_spec three(const std::string& node) {
    cluster_file_spec spec;
    spec.node = node;
    spec.members = {{"n3", 7403}, {"n1", 7401}, {"n2", 7402}};
    return spec;
  }
  std::string write_text(const std::string& text) {
    auto path = tls->path("raw.toml");
    std::ofstream{path} << text;
    return path;
  }
  // The error of loading `path` (fails the test if it loads).
  std::string error_of(const std::string& path, const std::string& node = {}) {
    std::string error;
    auto c = load_cluster_config(path, node, error);
    EXPECT_FALSE(c.has_value()) << path;
    return error;
  }
};
testing::tls_material* ClusterConfigTest::tls = nullptr;

TEST_F(ClusterConfigTest, ValidFileSortsMembersAndResolvesPaths) {
  auto path = write_cluster_file(tls->dir(), "c.toml", three("n2"));
  std::string error;
  auto c = load_cluster_config(path, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->cluster, "test");
  EXPECT_EQ(c->node, "n2");
  ASSERT_EQ(c->members.size(), 3u);
  EXPECT_EQ(c->members[0].name, "n1");
  EXPECT_EQ(c->members[2].name, "n3");
  EXPECT_EQ(c->members[2].port, 7403);
  EXPECT_EQ(c->members[0].host, "127.0.0.1");
  EXPECT_EQ(c->ordinal(), 1u);
  EXPECT_EQ(c->self().port, 7402);
  EXPECT_EQ(c->ca_file, tls->path("ca.pem"));  // relative to the file's folder
  EXPECT_EQ(c->heartbeat.count(), 200);
  EXPECT_EQ(c->connection_timeout.count(), 1000);
  EXPECT_EQ(c->lease_ttl.count(), 3000);
  EXPECT_EQ(c->postgres, "postgresql://parley@127.0.0.1:5432/parley");
}

TEST_F(ClusterConfigTest, NodeOverrideWinsAndMustBeAMember) {
  auto spec = three("n1");
  spec.cert = "n3.pem";
  spec.key = "n3.key";
  auto path = write_cluster_file(tls->dir(), "c.toml", spec);
  std::string error;
  auto c = load_cluster_config(path, "n3", error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->node, "n3");
  EXPECT_EQ(c->ordinal(), 2u);
  EXPECT_NE(error_of(path, "n9").find("node: \"n9\" is not one of the members"),
            std::string::npos);
}

TEST_F(ClusterConfigTest, DuplicateNameIsRefusedWithItsPlace) {
  auto spec = three("n1");
  spec.members.push_back({"n2", 7404});
  auto path = write_cluster_file(tls->dir(), "c.toml", spec);
  auto error = error_of(path);
  EXPECT_NE(error.find(path + ":"), std::string::npos) << error;
  EXPECT_NE(error.find("members[3].name: \"n2\" is named twice"), std::string::npos) << error;
}

TEST_F(ClusterConfigTest, BadAddressesAreRefused) {
  auto base = std::string{
      "cluster = \"c\"\nnode = \"a\"\npostgres = \"postgresql://x@h/db\"\n"
      "[tls]\nca = \"ca.pem\"\ncert = \"n1.pem\"\nkey = \"n1.key\"\n"
      "[[members]]\nname = \"a\"\naddress = "};
  EXPECT_NE(error_of(write_text(base + "\"127.0.0.1:0\"\n")).find("1..65535"), std::string::npos);
  EXPECT_NE(error_of(write_text(base + "\"127.0.0.1:70000\"\n")).find("1..65535"),
            std::string::npos);
  EXPECT_NE(error_of(write_text(base + "\"127.0.0.1\"\n")).find("expected HOST:PORT"),
            std::string::npos);
  EXPECT_NE(error_of(write_text(base + "\"::1:80\"\n")).find("in brackets"), std::string::npos);
  auto error = error_of(write_text(base + "\"127.0.0.1:x1\"\n"));
  EXPECT_NE(error.find(":10:11: members[0].address:"), std::string::npos) << error;
  // Two members on one address.
  error = error_of(write_text(base + "\"127.0.0.1:9\"\n[[members]]\nname = \"b\"\naddress = "
                                     "\"127.0.0.1:9\"\n"));
  EXPECT_NE(error.find("the same address as another member"), std::string::npos) << error;
  // IPv6 in brackets is fine.
  std::string ok;
  auto c = load_cluster_config(write_text(base + "\"[::1]:7401\"\n"), ok);
  ASSERT_TRUE(c) << ok;
  EXPECT_EQ(c->self().host, "::1");
}

TEST_F(ClusterConfigTest, TimesMustNest) {
  auto spec = three("n1");
  spec.heartbeat_ms = 1000;
  auto error = error_of(write_cluster_file(tls->dir(), "c.toml", spec));
  EXPECT_NE(error.find("heartbeat_ms: must be shorter than connection_timeout_ms"),
            std::string::npos)
      << error;
  spec = three("n1");
  spec.connection_timeout_ms = 3000;
  error = error_of(write_cluster_file(tls->dir(), "c.toml", spec));
  EXPECT_NE(error.find("connection_timeout_ms: must be shorter than lease_ttl_ms"),
            std::string::npos)
      << error;
  spec = three("n1");
  spec.heartbeat_ms = 0;
  error = error_of(write_cluster_file(tls->dir(), "c.toml", spec));
  EXPECT_NE(error.find("heartbeat_ms: expected 1..3600000"), std::string::npos) << error;
}

TEST_F(ClusterConfigTest, TlsFilesMustExistLoadAndBelongTogether) {
  auto spec = three("n1");
  spec.ca = "missing.pem";
  auto error = error_of(write_cluster_file(tls->dir(), "c.toml", spec));
  EXPECT_NE(error.find("tls.ca: no such file: " + tls->path("missing.pem")), std::string::npos)
      << error;
  spec = three("n1");
  spec.key = "n2.key";  // n1's certificate with n2's key
  error = error_of(write_cluster_file(tls->dir(), "c.toml", spec));
  EXPECT_NE(error.find("tls.key: " + tls->path("n2.key") + " is not the key of"),
            std::string::npos)
      << error;
  spec = three("n1");
  spec.cert = "rogue.pem";
  spec.key = "rogue.key";
  error = error_of(write_cluster_file(tls->dir(), "c.toml", spec));
  EXPECT_NE(error.find("is not signed by the cluster CA"), std::string::npos) << error;
  spec = three("n1");
  spec.cert = "n1.key";  // not a certificate
  error = error_of(write_cluster_file(tls->dir(), "c.toml", spec));
  EXPECT_NE(error.find("tls.cert: no certificate in"), std::string::npos) << error;
}

TEST_F(ClusterConfigTest, UnknownKeysMissingKeysAndSyntaxErrors) {
  auto path = write_cluster_file(tls->dir(), "c.toml", three("n1"));
  std::ofstream{path, std::ios::app} << "heartbeat = 3\n";
  EXPECT_NE(error_of(path).find("].heartbeat: unknown key"), std::string::npos) << error_of(path);
  auto error = error_of(write_text("cluster = \"c\"\nnode = \"a\"\n"));
  EXPECT_NE(error.find("postgres: missing"), std::string::npos) << error;
  error = error_of(write_text("cluster = \"c\"\nnode = \n"));
  EXPECT_NE(error.find("raw.toml:2:"), std::string::npos) << error;
  error = error_of(tls->path("nope.toml"));
  EXPECT_NE(error.find("nope.toml"), std::string::npos) << error;
  error = error_of(write_text("cluster = \"bad name\"\n"));
  EXPECT_NE(error.find(":1:11: cluster: \"bad name\": use up to 64 letters"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace parley::cluster
