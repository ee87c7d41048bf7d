#pragma once
// Test material for cluster tests: TLS files made with the `openssl` CLI (a
// cluster CA, node certificates, and a certificate of another CA), free
// loopback ports and cluster files.

#include <cstdint>
#include <string>
#include <vector>

namespace parley::cluster::testing {

/// A temporary folder with ca.pem, n1..n3.{pem,key} signed by ca.pem,
/// rogue.{pem,key} signed by other-ca.pem, and other-ca.pem itself.
class tls_material {
 public:
  tls_material();
  ~tls_material();
  tls_material(const tls_material&) = delete;
  tls_material& operator=(const tls_material&) = delete;
  const std::string& dir() const { return dir_; }
  std::string path(const std::string& file) const { return dir_ + "/" + file; }

 private:
  std::string dir_;
};

/// A loopback port nothing listens on right now.
uint16_t free_port();

struct file_member {
  std::string name;
  uint16_t port;
};

struct cluster_file_spec {
  std::string cluster = "test";
  std::string node;
  std::vector<file_member> members;
  std::string ca = "ca.pem";
  std::string cert;  // default: NODE.pem
  std::string key;   // default: NODE.key
  int heartbeat_ms = 200;
  int connection_timeout_ms = 1000;
  int lease_ttl_ms = 3000;
};

/// Writes DIR/NAME (TOML) and returns its path.
std::string write_cluster_file(const std::string& dir, const std::string& name,
                               const cluster_file_spec& spec);

}  // namespace parley::cluster::testing
