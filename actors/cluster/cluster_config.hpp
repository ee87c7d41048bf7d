#pragma once
// Reads the cluster file (TOML) into a cluster_config
// (actors/core/cluster_config.hpp says what each field means).

#include <optional>
#include <string>

#include "actors/core/cluster_config.hpp"

namespace parley::cluster {

/// Reads a cluster file; nullopt and `error` ("FILE:LINE:COL: key: what").
std::optional<cluster_config> load_cluster_config(const std::string& path, std::string& error);
/// The same with this node's name given (`--cluster-node NAME`), which wins
/// over the file's `node`. Relative TLS paths are relative to the file's
/// folder; every check is made here (names, addresses, files readable,
/// heartbeat < connection_timeout < lease_ttl), so a node that starts has a
/// usable file.
std::optional<cluster_config> load_cluster_config(const std::string& path,
                                                  const std::string& node_override,
                                                  std::string& error);

}  // namespace parley::cluster
