#include "actors/core/cluster_config.hpp"

#include <stdexcept>

namespace parley::cluster {

const member_address& cluster_config::self() const { return members.at(ordinal()); }

uint32_t cluster_config::ordinal() const {
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i].name == node) return static_cast<uint32_t>(i);
  throw std::logic_error("cluster_config: node " + node + " is not a member");
}

}  // namespace parley::cluster
