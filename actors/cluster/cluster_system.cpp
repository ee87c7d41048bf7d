// What a cluster node's actor system needs before it exists.

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include "actors/cluster/node_link.hpp"
#include "actors/cluster/node_types.hpp"

namespace parley::cluster {

void configure_cluster_system(caf::actor_system_config& cfg, const cluster_config& cluster) {
  cfg.load<caf::io::middleman>();
  cfg.load<caf::openssl::manager>();
  // Any of these set turns on CAF's certificate authentication: both ends
  // present a certificate and verify the other's against the CA
  // (SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT), so a process
  // without a certificate of this CA can neither connect nor be connected to.
  cfg.openssl_cafile = cluster.ca_file;
  cfg.openssl_certificate = cluster.cert_file;
  cfg.openssl_key = cluster.key_file;
  // Off by default in CAF 0.17: a frozen peer would never be noticed.
  cfg.set("middleman.heartbeat-interval", caf::timespan{cluster.heartbeat});
  cfg.set("middleman.connection-timeout", caf::timespan{cluster.connection_timeout});
  // BASP refuses a peer with no identifier in common: another cluster's
  // nodes are turned away before hello.
  cfg.set("middleman.app-identifiers", std::vector<std::string>{"parley:" + cluster.cluster});
  register_cluster_types(cfg);
}

std::chrono::milliseconds reconnect_delay(const cluster_config& cluster, uint32_t failures) {
  auto delay = std::chrono::milliseconds{100} * (uint64_t{1} << std::min<uint32_t>(failures, 16));
  return std::min<std::chrono::milliseconds>(delay, cluster.connection_timeout);
}

}  // namespace parley::cluster
