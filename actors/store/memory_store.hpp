#pragma once
// The in-memory thread store: history kept in the process only (tests,
// benchmarks, ephemeral deployments). The local store (JSONL rollouts +
// SQLite) implements the same store_actor interface.

#include <string>
#include <unordered_map>

#include "actors/core/config.hpp"
#include "actors/core/interfaces.hpp"
#include <memory>

namespace parley {

/// Folds one record into a thread's history (shared by every store).
void apply_record(stored_thread& thread, const store_record& record);

/// thread/list over threads held in memory: filters, order, cursor page.
std::vector<protocol::thread> select_threads(const std::vector<const stored_thread*>& all,
                                            const protocol::thread_list_params& params,
                                            std::optional<std::string>& next_cursor);

struct memory_store_state {
  static inline const char* name = "memory_store";
  std::unordered_map<std::string, stored_thread> threads;
  /// Every record of each thread, in order: thread/revert replays the part
  /// it keeps (a compaction's dropped context comes back with it). None for
  /// a thread with only its creation: that record is its entry in `threads`.
  std::unordered_map<std::string, std::vector<store_record>> logs;
};

/// `config` is unused today; every parley actor is spawned with an argument
/// because CAF 0.17 trips UBSan on argument-less function-based actors.
store_actor::behavior_type memory_store(store_actor::stateful_pointer<memory_store_state> self,
                                        std::shared_ptr<const runtime_config> config);

}  // namespace parley
