#pragma once
// The cluster's statements on the shared store (schema version 2:
// parley_nodes, thread_leases, parley_fence, parley_lease; see
// postgres_schema.cpp): a node joining and renewing its node lease, thread
// leases taken, released and read, the fence every write of a thread
// carries, and the cluster as `atom::members` and `parley cluster status`
// show it. Every time is the database's clock. Pure: no actors, no libpq.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/core/messages.hpp"
#include "actors/store/pg_types.hpp"

namespace parley::pg {

/// SQLSTATEs the fence and the lease raise: the thread is another node's
/// (or its lease was lost), or the node itself is fenced.
inline constexpr const char* not_owner_state = "PA001";
inline constexpr const char* fenced_state = "PA002";

/// Registers `node` with a new incarnation (the last one + 1, or 1) and a
/// node lease of `ttl_ms`. Rows: the incarnation.
statement join_node(const std::string& node, const std::string& address, int64_t ttl_ms);
/// Extends this incarnation's node lease by `ttl_ms` while it has not
/// expired. Rows: one (milliseconds left) when renewed, none when the lease
/// had expired or a newer incarnation joined: the node is fenced.
statement renew_node(const std::string& node, uint64_t incarnation, int64_t ttl_ms);

/// First statement of a write of `thread` (same transaction): refused
/// (PA001/PA002) unless this node holds the lease with `epoch`, or, without
/// an epoch, no live node holds it.
statement fence(const std::string& thread, const std::string& node, uint64_t incarnation,
                std::optional<uint64_t> epoch);
/// Takes or confirms the lease. Rows: (epoch, NULL) when granted, (NULL,
/// the live node holding it) when not.
statement take_lease(const std::string& thread, const std::string& node, uint64_t incarnation);
/// Lets this incarnation's lease go (node NULL, the epoch kept).
statement release_lease(const std::string& thread, const std::string& node,
                        uint64_t incarnation);
/// Rows: the live node holding the lease (none when no live node does).
statement lease_owner(const std::string& thread);
/// Rows: name, address, incarnation, alive, ms left, threads; by name.
statement list_members();
/// Rows: (thread, pending) leased to `node` while its lease has expired or
/// by one of its superseded incarnations.
statement orphaned_threads(const std::string& node);
/// Rows: thread, node, incarnation, epoch, holder alive; every lease held.
statement list_leases();

cluster_member member_of(const std::vector<value>& row);
orphan_thread orphan_of(const std::vector<value>& row);

}  // namespace parley::pg
