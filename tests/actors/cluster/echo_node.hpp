#pragma once
// A cluster node for tests: an actor system set up as a cluster node whose
// sessions echo each line back ("echo: LINE") and whose stats are
// {"node":"NAME"}.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <memory>

#include "actors/cluster/node_link.hpp"

namespace parley::cluster::testing {

class echo_node {
 public:
  /// `table`: the message table to claim (empty: the real one).
  explicit echo_node(std::shared_ptr<const cluster_config> config, std::string table = {});
  ~echo_node();
  echo_node(const echo_node&) = delete;
  echo_node& operator=(const echo_node&) = delete;

  caf::actor_system& system() { return *system_; }
  node_link_actor link() const { return link_; }
  /// The port it listens on; throws if it cannot.
  uint16_t wait_listening();
  /// The peers up now.
  peer_map peers();

 private:
  caf::actor_system_config caf_config_;
  std::unique_ptr<caf::actor_system> system_;
  node_link_actor link_;
};

}  // namespace parley::cluster::testing
