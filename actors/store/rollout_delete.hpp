#pragma once
// Deleting a thread's rollout for thread/delete: the file is unlinked and its
// folder synced, so the deletion survives a crash right after it.
//
// Order (why): the local store unlinks the rollout first and drops the index
// entry after. The rollouts are the truth and the index is rebuilt from them
// at every start (sync_index drops an entry whose file is gone), so a kill -9
// between the two leaves a thread that is wholly gone after the restart. The
// other order would leave, after a crash, a rollout with no entry, which the
// next start indexes again: the thread would come back.

#include <caf/error.hpp>
#include <string>

namespace parley::store {

/// Unlinks the rollout at `path` and syncs its folder. A file that is already
/// gone is no error (a delete retried after a crash finishes the job).
caf::error delete_rollout(const std::string& path);

}  // namespace parley::store
