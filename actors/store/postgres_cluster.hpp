#pragma once
// The PostgreSQL store as one node of a cluster (runtime_config::cluster):
// it joins the shared store with a new incarnation, renews its node lease
// every lease_ttl / 3 on its own connection, takes and lets go of thread
// leases, and sends every write of a thread behind the fence
// (pg_leases.hpp), with the epoch it was given for that thread. A renewal
// that finds the lease expired or the incarnation superseded (or a fence
// that says so) fences the node: every write and lease is refused until
// atom::rejoin. Without a cluster, the store answers as the only node and
// its writes go out as they always did.

#include "actors/store/postgres_store.hpp"

namespace parley::store {

/// Joins and starts the renewals (a store with runtime_config::cluster).
void start_cluster(postgres_store_detail::self_ptr self);

/// A write of `thread` (statements that change thread_lines or threads):
/// in a cluster, after the join, fenced in the same transaction; `then`
/// sees the outcome without the fence's result. Else as run().
void run_write(postgres_store_detail::self_ptr self, const std::string& thread,
               std::vector<pg::statement> statements, std::function<void(pg::outcome&)> then,
               bool durable = true);

// store_actor's cluster messages (single node: the stubs' answers).
caf::result<uint64_t> on_lease(postgres_store_detail::self_ptr self, const std::string& thread);
void on_release(postgres_store_detail::self_ptr self, const std::string& thread);
caf::result<std::string> on_owner(postgres_store_detail::self_ptr self, const std::string& thread);
caf::result<cluster_view> on_members(postgres_store_detail::self_ptr self);
caf::result<std::vector<orphan_thread>> on_orphans(postgres_store_detail::self_ptr self,
                                                   const std::string& node);
caf::result<uint64_t> on_rejoin(postgres_store_detail::self_ptr self);

// The timer and the tests' hold.
void on_renew(postgres_store_detail::self_ptr self);
void on_hold(postgres_store_detail::self_ptr self, bool held);

}  // namespace parley::store
