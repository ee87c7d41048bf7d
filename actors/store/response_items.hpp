#pragma once
// The model's view of a thread's items: Responses API items, as Codex writes
// them as `response_item` lines in a rollout and as a stateless request
// sends them back as `input`. One derivation for both, so what a resumed
// thread shows the model is what its rollout says.

#include <nlohmann/json.hpp>
#include <vector>

#include "actors/core/messages.hpp"
#include "protocol/items.hpp"
#include "protocol/types.hpp"

namespace parley::store {

/// The response items one thread item stands for (a user or assistant
/// message; a command as its call and its output). File changes have none:
/// the item keeps the diff, not the patch the model wrote.
std::vector<nlohmann::json> response_items_of(const protocol::thread_item& item);

/// Every turn's items, in order: the context a new turn starts from.
std::vector<nlohmann::json> response_items_of(const std::vector<protocol::turn>& turns);

/// A compaction's summary as the model is given it: a user message.
nlohmann::json compaction_summary_item(const std::string& message);

/// Applies a compaction in turn `turn_id` (empty: outside any turn) to a
/// thread's context: everything before it is gone, `replacement` stands for
/// it, and the turns `turn_ids` (every turn so far) no longer derive any.
void compact_context(std::vector<context_item>& context, std::vector<std::string>& compacted_turns,
                     std::vector<std::string> turn_ids, const std::string& turn_id,
                     std::vector<nlohmann::json> replacement);

/// What the model has seen of a stored thread, except turn `except_turn` (the
/// one asking): the context written before any turn, then each turn's
/// stored context, or, for a turn that has none (a scripted model's, in
/// memory), what its items stand for. Context of turns the thread no longer
/// has is left out. After a compaction, the turns it replaced give only
/// what they stored after it (its replacement first). Items a client
/// injected keep the place they were stored in (after the items that stand
/// for a turn that stored no context).
std::vector<nlohmann::json> model_history(const stored_thread& thread,
                                          const std::string& except_turn);

}  // namespace parley::store
