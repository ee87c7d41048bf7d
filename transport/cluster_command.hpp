#pragma once
// `parley cluster status`: the cluster as the shared PostgreSQL store sees
// it (actors/store/pg_leases.hpp): every node with its address, incarnation,
// whether its node lease holds, how long it has left and how many threads it
// holds; with --threads every thread lease (node, epoch). Read-only, by the
// database's clock.
//
//   parley cluster status [--store-url URL] [--threads] [--json]

#include <string>

namespace parley {

/// What `parley cluster status` was asked (filled by transport/command_line).
struct cluster_status_request {
  std::string store_url;  // the cluster's database
  std::string cluster_file;  // or the cluster file, whose `postgres` it is
  bool threads = false;
  bool json = false;
};

/// Prints the members (and leases); exit 0 once read, 1 when the database
/// cannot be read (stderr says why), 2 without a database to read.
int run_cluster_status(const cluster_status_request& req);

}  // namespace parley
