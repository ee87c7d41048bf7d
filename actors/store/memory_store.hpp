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
  /// A thread with more than its creation: what it folded to, and every
  /// record of it in order (thread/revert replays the part it keeps; a
  /// compaction's dropped context comes back with it).
  struct history {
    stored_thread folded;
    std::vector<store_record> log;
  };
  std::unordered_map<std::string, history> threads;
  /// A thread that has only been created (what most loaded threads are) is
  /// its metadata alone: apply_record of a created record sets the meta and
  /// the context, so with no context and no turns (not a fork) the meta is
  /// the whole fold. A 640-byte node with its key, where one holding a
  /// stored_thread is 1,536 (issue 23, memory per idle loaded thread). Its
  /// next record moves it to `threads`, its log made from its creation.
  std::unordered_map<std::string, protocol::thread> created;
};

/// `config` is unused today; every parley actor is spawned with an argument
/// because CAF 0.17 trips UBSan on argument-less function-based actors.
store_actor::behavior_type memory_store(store_actor::stateful_pointer<memory_store_state> self,
                                        std::shared_ptr<const runtime_config> config);

}  // namespace parley
