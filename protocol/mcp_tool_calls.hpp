#pragma once
// An MCP tool call as the model and the client see it (issue 30): what the
// model is told of a server's CallToolResult (or of a call that got none),
// the result an mcpToolCall item shows, and the line a server's progress
// becomes. Pure: shared by the turn (actors/threads) and the tests.

#include <string>

#include "protocol/json_codec.hpp"

namespace parley::protocol {

/// What the model is told of an MCP call, as Codex 0.169 tells it: a
/// result's structuredContent (when not null) as JSON text; else, when its
/// content holds an image, the content as Responses content parts (text ->
/// input_text, image -> input_image with a data: URL, anything else ->
/// input_text of its JSON); else the content array as JSON text.
struct mcp_model_output {
  std::string text;    // the output as text (the content parts' text when there are parts)
  json content_items;  // null, or the parts (input_text / input_image) the output is
  bool success = true;  // false when the server said isError, or there was no result
};

/// `result`: the server's CallToolResult (content, structuredContent?, isError?).
mcp_model_output mcp_output_of_result(const json& result);
/// A call with no result (server not connected, unknown tool, timeout, the
/// server died): Codex's error result, one text part, isError.
mcp_model_output mcp_output_of_error(const std::string& message);

/// The item's `result` (McpToolCallResult): content (always an array),
/// structuredContent and _meta when the server sent them.
json mcp_item_result(const json& result);
/// Whether the server marked the result an error (isError: true).
bool mcp_result_is_error(const json& result);

/// A server's notifications/progress params as one line for
/// item/mcpToolCall/progress: its message, else "progress/total" or "progress".
std::string mcp_progress_message(const json& params);

}  // namespace parley::protocol
