#pragma once
// The model's view of a thread's items: Responses API items, as Codex writes
// them as `response_item` lines in a rollout and as a stateless request
// sends them back as `input`. One derivation for both, so what a resumed
// thread shows the model is what its rollout says.

#include <nlohmann/json.hpp>
#include <vector>

#include "protocol/items.hpp"
#include "protocol/types.hpp"

namespace parley::store {

/// The response items one thread item stands for (a user or assistant
/// message; a command as its call and its output). File changes have none:
/// the item keeps the diff, not the patch the model wrote.
std::vector<nlohmann::json> response_items_of(const protocol::thread_item& item);

/// Every turn's items, in order: the context a new turn starts from.
std::vector<nlohmann::json> response_items_of(const std::vector<protocol::turn>& turns);

}  // namespace parley::store
