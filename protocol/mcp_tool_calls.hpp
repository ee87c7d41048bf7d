#pragma once
// An MCP tool call as the model and the client see it (issue 30): what the
// model is told of a server's CallToolResult (or of a call that got none),
// the result an mcpToolCall item shows, and the line a server's progress
// becomes. Pure: shared by the turn (actors/threads) and the tests.

#include <string>
#include <string_view>

#include "protocol/json_codec.hpp"

namespace parley::protocol {

/// What the model is told of an MCP call, as Codex 0.169 tells it: a
/// header "Wall time: S seconds\nOutput:" (S the call's time, 4 decimals),
/// then the result's structuredContent (when not null) as JSON text after a
/// newline; else the content as Responses content parts after a header part:
/// text -> input_text; image -> input_image with a data: URL of the image
/// as prompt_image.hpp prepares it (decoded, scaled down when bigger than
/// detail "high" allows) and a detail ("high" unless the block's `_meta`
/// asks "auto"; "original" goes as "high"; "low" and an image that does
/// not decode are left out, saying so, as Codex does); audio -> a text
/// saying the model takes none;
/// anything else -> input_text of its JSON. JSON text keeps the server's
/// key order (Codex's does).
struct mcp_model_output {
  std::string text;    // the output as text (the content parts' text when there are parts)
  json content_items;  // null, or the parts (input_text / input_image) the output is
  bool success = true;  // false when the server said isError, or there was no result
};

/// The first line(s) of every output: the call's time from the model's
/// call to its end (an approval's wait included, as Codex counts it).
std::string mcp_wall_time_header(double wall_seconds);

/// `result_text`: the server's CallToolResult (content, structuredContent?,
/// isError?) as the server sent it.
mcp_model_output mcp_output_of_result_text(std::string_view result_text, double wall_seconds);
mcp_model_output mcp_output_of_result(const json& result, double wall_seconds);
/// A call with no result (server not connected, unknown tool, timeout, the
/// server died, the person declined): Codex's error result, one text part,
/// isError.
mcp_model_output mcp_output_of_error(const std::string& message, double wall_seconds);

/// The item's `result` (McpToolCallResult): content (always an array; an
/// audio block as the text the model was told instead, as Codex shows it),
/// structuredContent and _meta (null when the server sent none).
json mcp_item_result(const json& result);
/// Whether the server marked the result an error (isError: true).
bool mcp_result_is_error(const json& result);

/// A server's notifications/progress params as one line for
/// item/mcpToolCall/progress: its message, else "progress/total" or "progress".
std::string mcp_progress_message(const json& params);

}  // namespace parley::protocol
