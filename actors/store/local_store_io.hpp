#pragma once
// The local store's private actors, each on a thread of its own (detached):
// a rollout writer/reader (append with fsync, read, archive; the store runs
// two, sharded by path) and the owner of the SQLite thread index.

#include <caf/local_actor.hpp>
#include <string>

#include "actors/store/local_store.hpp"

namespace parley::store {

/// A rollout I/O actor on a thread of its own, linked to `owner` (the store).
rollout_io_actor spawn_rollout_io(caf::local_actor* owner, const std::string& home);

/// The index's owner on a thread of its own, linked to `owner`: opens (or
/// rebuilds) HOME's SQLite index, then answers lookups and pages.
index_actor spawn_index_owner(caf::local_actor* owner, const std::string& home);

}  // namespace parley::store
