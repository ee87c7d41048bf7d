#pragma once
// The local store's private actors, each on a thread of its own (detached):
// a rollout writer/reader (append with fsync, read, archive; the store runs
// two, sharded by path) and the owner of the SQLite thread index.

#include <caf/local_actor.hpp>
#include <chrono>
#include <string>

#include "actors/core/telemetry.hpp"
#include "actors/store/file_ops.hpp"
#include "actors/store/local_store.hpp"

namespace parley::store {

struct rollout_io_setup {
  int shard = 0;  // its name in the store's health
  size_t backlog_bytes = size_t{32} << 20;
  std::shared_ptr<file_ops> ops;  // null: the real system calls
  std::shared_ptr<runtime_telemetry> telemetry;  // null: nobody hears its faults
  index_actor index;          // hears what changed (file_report)
  std::string journal_dir;    // index_journal
  std::string journal_stamp;
};

/// A rollout I/O actor on a thread of its own, linked to `owner` (the store):
/// appends through a rollout_writer, retrying what the disk refused.
rollout_io_actor spawn_rollout_io(caf::local_actor* owner, rollout_io_setup setup);

/// The index's owner on a thread of its own, linked to `owner`: opens (or
/// rebuilds) HOME's SQLite index, catches up with the journals earlier
/// processes left (not `stamp`'s, this process's), then answers lookups and
/// pages and commits the I/O actors' reports; with `prune_after` > 0, prunes
/// (retention) at start and hourly.
index_actor spawn_index_owner(caf::local_actor* owner, const std::string& home,
                              const std::string& stamp, std::chrono::milliseconds prune_after,
                              std::shared_ptr<runtime_telemetry> telemetry);

}  // namespace parley::store
