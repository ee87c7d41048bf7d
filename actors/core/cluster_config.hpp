#pragma once
// A cluster node's configuration (`parley app-server --cluster FILE`): who
// this node is, where its middleman listens, the other members, the shared
// store and the node links' credentials. Plain data: the file is read by
// actors/cluster/cluster_config.hpp (load_cluster_config).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parley::cluster {

/// One member as the cluster file names it.
struct member_address {
  std::string name;
  std::string host;
  uint16_t port = 0;
};

struct cluster_config {
  /// The cluster's name: a node of another cluster is refused at hello.
  std::string cluster = "parley";
  /// This node's name (one of `members`).
  std::string node;
  /// Every member, this node included, sorted by name. A member's ordinal
  /// (its position here) sets its server->client request ids apart.
  std::vector<member_address> members;
  /// The shared PostgreSQL store (a postgresql:// URL, no password).
  std::string postgres;
  /// The node links' TLS credentials: every node presents a certificate
  /// signed by the cluster's CA and accepts only peers that do.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  /// A node whose lease (renewed every lease_ttl / 3) lapses is fenced: the
  /// others may take its threads over.
  std::chrono::milliseconds lease_ttl{4000};
  /// CAF's middleman heartbeat and the silence after which a link is
  /// dropped (off by default in CAF 0.17: a frozen peer would go unnoticed).
  std::chrono::milliseconds heartbeat{500};
  std::chrono::milliseconds connection_timeout{2000};

  const member_address& self() const;
  /// This node's position in `members`.
  uint32_t ordinal() const;
};

}  // namespace parley::cluster
