#include "actors/store/pg_leases.hpp"

namespace parley::pg {

namespace pg_leases_detail {

value number_text(int64_t n) {
  return std::to_string(n);
}
value unsigned_text(uint64_t n) {
  return std::to_string(n);
}

}  // namespace pg_leases_detail

using namespace pg_leases_detail;

statement join_node(const std::string& node, const std::string& address, int64_t ttl_ms) {
  return {"INSERT INTO parley_nodes AS n (name, address, incarnation, lease_until, joined_at)"
          " VALUES ($1, $2, 1, clock_timestamp() + $3::bigint * interval '1 millisecond',"
          " clock_timestamp())"
          " ON CONFLICT (name) DO UPDATE SET address = EXCLUDED.address,"
          " incarnation = n.incarnation + 1, lease_until = EXCLUDED.lease_until,"
          " joined_at = EXCLUDED.joined_at"
          " RETURNING incarnation",
          {node, address, number_text(ttl_ms)}};
}

statement renew_node(const std::string& node, uint64_t incarnation, int64_t ttl_ms) {
  return {"UPDATE parley_nodes"
          " SET lease_until = clock_timestamp() + $3::bigint * interval '1 millisecond'"
          " WHERE name = $1 AND incarnation = $2::bigint AND lease_until > clock_timestamp()"
          " RETURNING (extract(epoch FROM lease_until - clock_timestamp()) * 1000)::bigint",
          {node, unsigned_text(incarnation), number_text(ttl_ms)}};
}

statement fence(const std::string& thread, const std::string& node, uint64_t incarnation,
                std::optional<uint64_t> epoch) {
  return {"SELECT parley_fence($1, $2, $3::bigint, $4::bigint)",
          {thread, node, unsigned_text(incarnation),
           epoch ? unsigned_text(*epoch) : value{}}};
}

statement take_lease(const std::string& thread, const std::string& node, uint64_t incarnation) {
  return {"SELECT epoch, owner FROM parley_lease($1, $2, $3::bigint)", {thread, node, unsigned_text(incarnation)}};
}

statement release_lease(const std::string& thread, const std::string& node,
                        uint64_t incarnation) {
  return {"UPDATE thread_leases SET node = NULL"
          " WHERE thread_id = $1 AND node = $2 AND incarnation = $3::bigint",
          {thread, node, unsigned_text(incarnation)}};
}

statement lease_owner(const std::string& thread) {
  return {"SELECT l.node FROM thread_leases l"
          " WHERE l.thread_id = $1 AND l.node IS NOT NULL"
          " AND parley_node_alive(l.node, l.incarnation)",
          {thread}};
}

statement list_members() {
  return {"SELECT n.name, n.address, n.incarnation, n.lease_until > clock_timestamp(),"
          " (extract(epoch FROM n.lease_until - clock_timestamp()) * 1000)::bigint,"
          " (SELECT count(*) FROM thread_leases l"
          "   WHERE l.node = n.name AND l.incarnation = n.incarnation)"
          " FROM parley_nodes n ORDER BY n.name",
          {}};
}

statement orphaned_threads(const std::string& node) {
  return {"SELECT l.thread_id, coalesce(t.pending, 0) <> 0"
          " FROM thread_leases l JOIN parley_nodes n ON n.name = l.node"
          " LEFT JOIN threads t ON t.id = l.thread_id"
          " WHERE l.node = $1"
          " AND (n.lease_until <= clock_timestamp() OR l.incarnation <> n.incarnation)"
          " ORDER BY l.thread_id",
          {node}};
}

statement list_leases() {
  return {"SELECT l.thread_id, l.node, l.incarnation, l.epoch,"
          " parley_node_alive(l.node, l.incarnation)"
          " FROM thread_leases l WHERE l.node IS NOT NULL ORDER BY l.node, l.thread_id",
          {}};
}

cluster_member member_of(const std::vector<value>& row) {
  auto str = [&](size_t i) { return row.at(i).value_or(""); };
  cluster_member m;
  m.name = str(0);
  m.address = str(1);
  m.incarnation = std::stoull(row.at(2).value_or("0"));
  m.alive = str(3) == "t";
  m.lease_ms_left = std::stoll(row.at(4).value_or("0"));
  m.threads = std::stoull(row.at(5).value_or("0"));
  return m;
}

orphan_thread orphan_of(const std::vector<value>& row) {
  return {row.at(0).value_or(""), row.at(1) == value{"t"}};
}

}  // namespace parley::pg
