#include "transport/cluster_command.hpp"

#include "actors/cluster/cluster_config.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "actors/store/pg_blocking.hpp"
#include "actors/store/pg_client.hpp"
#include "actors/store/pg_leases.hpp"
#include "actors/store/postgres_schema.hpp"

namespace parley {

namespace cluster_command_detail {

struct lease_row {
  std::string thread, node;
  uint64_t incarnation = 0, epoch = 0;
  bool alive = false;
};

/// A statement's rows (blocking: this is a command, not an actor).
bool rows_of(PGconn* c, const pg::statement& s, std::vector<std::vector<pg::value>>& rows,
             std::string& why) {
  auto r = pg::exec_params(c, s.sql, s.params, why);
  if (!r) return false;
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    std::vector<pg::value> row;
    for (int j = 0; j < PQnfields(r.get()); ++j)
      row.push_back(PQgetisnull(r.get(), i, j) ? pg::value{}
                                               : pg::value{PQgetvalue(r.get(), i, j)});
    rows.push_back(std::move(row));
  }
  return true;
}

/// "1.2s left", "expired 3.0s ago".
std::string lease_left(int64_t ms) {
  char buf[64];
  if (ms >= 0)
    std::snprintf(buf, sizeof buf, "%.1fs left", static_cast<double>(ms) / 1000);
  else
    std::snprintf(buf, sizeof buf, "expired %.1fs ago", static_cast<double>(-ms) / 1000);
  return buf;
}

std::string padded(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

void print_text(const std::vector<cluster_member>& members, const std::vector<lease_row>* leases) {
  size_t name_w = 4, addr_w = 7;
  for (auto& m : members) {
    name_w = std::max(name_w, m.name.size());
    addr_w = std::max(addr_w, m.address.size());
  }
  std::cout << padded("NODE", name_w) << "  " << padded("ADDRESS", addr_w)
            << "  INCARNATION  ALIVE  THREADS  LEASE\n";
  for (auto& m : members)
    std::cout << padded(m.name, name_w) << "  " << padded(m.address, addr_w) << "  "
              << padded(std::to_string(m.incarnation), 11) << "  " << padded(m.alive ? "yes" : "no", 5)
              << "  " << padded(std::to_string(m.threads), 7) << "  " << lease_left(m.lease_ms_left)
              << "\n";
  if (members.empty()) std::cout << "(no node has joined)\n";
  if (!leases) return;
  std::cout << "\nTHREAD  NODE  EPOCH  (holder's incarnation, alive)\n";
  for (auto& l : *leases)
    std::cout << l.thread << "  " << l.node << "  " << l.epoch << "  (" << l.incarnation << ", "
              << (l.alive ? "alive" : "dead: an orphan") << ")\n";
  if (leases->empty()) std::cout << "(no thread is leased)\n";
}

void print_json(const std::vector<cluster_member>& members, const std::vector<lease_row>* leases) {
  nlohmann::ordered_json out;
  out["members"] = nlohmann::ordered_json::array();
  for (auto& m : members)
    out["members"].push_back({{"name", m.name},
                              {"address", m.address},
                              {"incarnation", m.incarnation},
                              {"alive", m.alive},
                              {"leaseMsLeft", m.lease_ms_left},
                              {"threads", m.threads}});
  if (leases) {
    out["leases"] = nlohmann::ordered_json::array();
    for (auto& l : *leases)
      out["leases"].push_back({{"thread", l.thread},
                               {"node", l.node},
                               {"incarnation", l.incarnation},
                               {"epoch", l.epoch},
                               {"alive", l.alive}});
  }
  std::cout << out.dump() << "\n";
}

}  // namespace cluster_command_detail

using namespace cluster_command_detail;

int run_cluster_status(const cluster_status_request& given) {
  auto req = given;
  if (!req.cluster_file.empty()) {
    std::string error;
    auto cluster = cluster::load_cluster_config(req.cluster_file, error);
    if (!cluster) {
      std::cerr << "parley: " << error << "\n";
      return 2;
    }
    req.store_url = cluster->postgres;
  }
  if (req.store_url.empty()) {
    std::cerr << "parley: cluster status needs --cluster FILE or --store-url (or "
                 "PARLEY_STORE_URL)\n";
    return 2;
  }
  if (auto problem = pg::conninfo_problem(req.store_url)) {
    std::cerr << "parley: " << *problem << "\n";
    return 2;
  }
  if (auto problem = pg::schema_problem(req.store_url)) {
    std::cerr << "parley: " << *problem << "\n";
    return 1;
  }
  std::string why;
  auto c = pg::connect_blocking(req.store_url, why);
  std::vector<std::vector<pg::value>> member_rows, lease_rows;
  if (!c || !rows_of(c.get(), pg::list_members(), member_rows, why)
      || (req.threads && !rows_of(c.get(), pg::list_leases(), lease_rows, why))) {
    std::cerr << "parley: cannot read the cluster (" << pg::describe_target(req.store_url)
              << "): " << why << "\n";
    return 1;
  }
  std::vector<cluster_member> members;
  for (auto& r : member_rows) members.push_back(pg::member_of(r));
  std::vector<lease_row> leases;
  for (auto& r : lease_rows)
    leases.push_back({r.at(0).value_or(""), r.at(1).value_or(""),
                      std::stoull(r.at(2).value_or("0")), std::stoull(r.at(3).value_or("0")),
                      r.at(4) == pg::value{"t"}});
  auto* shown = req.threads ? &leases : nullptr;
  if (req.json)
    print_json(members, shown);
  else
    print_text(members, shown);
  return 0;
}

}  // namespace parley
