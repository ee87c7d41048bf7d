#pragma once
// Codex's TurnItems (the `item` of an item_completed event in a rollout) and
// parley's thread items, both ways: what parley writes, Codex reads, and the
// reverse.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "protocol/items.hpp"

namespace parley::store {

/// The argv parley runs a command with (it is shown as its shell join).
std::vector<std::string> argv_of(const protocol::command_execution_item& c);

/// A commandExecution item as a CommandExecution TurnItem.
nlohmann::json turn_item_of(const protocol::command_execution_item& c);

/// A fileChange item as a FileChange TurnItem: changes keyed by path, in
/// Codex's FileChange shape (add/delete carry the content).
nlohmann::json turn_item_of(const protocol::file_change_item& f);

/// A dynamicToolCall item as a DynamicToolCall TurnItem, as Codex 0.169
/// writes it (its client's content items, success, duration).
nlohmann::json turn_item_of(const protocol::dynamic_tool_call_item& d);
/// An mcpToolCall item as parley's McpToolCall TurnItem (Codex stores MCP
/// calls as events of their own; this keeps the item whole).
nlohmann::json turn_item_of(const protocol::mcp_tool_call_item& m);

/// The thread item a TurnItem describes; nullopt for kinds parley does not
/// show (reasoning, web search, ...).
std::optional<protocol::thread_item> item_of_turn_item(const nlohmann::json& item);

}  // namespace parley::store
