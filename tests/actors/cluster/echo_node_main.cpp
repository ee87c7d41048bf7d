// parley-cluster-echo-node CLUSTER_FILE [NODE]: one echo node (echo_node.hpp)
// in its own process, for tests that stop or kill a node. Prints
// "listening PORT" once it listens, runs until stdin closes.

#include <iostream>
#include <string>

#include "actors/cluster/cluster_config.hpp"
#include "tests/actors/cluster/echo_node.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: parley-cluster-echo-node CLUSTER_FILE [NODE]\n";
    return 2;
  }
  std::string problem;
  auto config = parley::cluster::load_cluster_config(argv[1], argc > 2 ? argv[2] : "", problem);
  if (!config) {
    std::cerr << problem << "\n";
    return 2;
  }
  parley::cluster::testing::echo_node node{
      std::make_shared<const parley::cluster::cluster_config>(std::move(*config))};
  std::cout << "listening " << node.wait_listening() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  return 0;
}
