#pragma once
// ThreadItem and UserInput: what a turn is made of.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "protocol/json_codec.hpp"

namespace parley::protocol {

/// One element of a user's input. Text is typed; the other variants (images,
/// mentions, skills, audio) are kept as their JSON object and echoed verbatim.
struct user_input {
  std::string type = "text";
  std::string text;  // for type "text"
  json raw;          // the object as received (or built by make_text)

  static user_input make_text(std::string text);
};
void to_json(json& j, const user_input& x);
void from_json(const json& j, user_input& x);

/// The concatenated text of all text inputs, one per line.
std::string joined_text(const std::vector<user_input>& input);

struct user_message_item {
  std::string id;
  std::vector<user_input> content;
  std::optional<std::string> client_id;
};

struct agent_message_item {
  std::string id;
  std::string text;
  std::optional<std::string> phase;  // "commentary" | "final_answer" | ...
};

/// How a command is summarised for display (Codex's parsed command).
struct command_action {
  enum class kind { read, list_files, search, unknown };
  kind type = kind::unknown;
  std::string command;
  std::optional<std::string> name;   // read
  std::optional<std::string> path;   // read, listFiles, search
  std::optional<std::string> query;  // search
};
void to_json(json& j, const command_action& x);
void from_json(const json& j, command_action& x);

enum class item_status { in_progress, completed, failed, declined };
void to_json(json& j, const item_status& x);
void from_json(const json& j, item_status& x);
const char* to_string(item_status x);

struct command_execution_item {
  std::string id;
  std::string command;  // the full shell invocation shown to the user
  std::string cwd;
  item_status status = item_status::in_progress;
  std::vector<command_action> command_actions;
  std::optional<std::string> aggregated_output;
  std::optional<int32_t> exit_code;
  std::optional<int64_t> duration_ms;
  std::optional<std::string> process_id;
  /// Who ran it: "agent" (the model) or "userShell" (thread/shellCommand).
  std::string source = "agent";
};

/// One file of a fileChange item (FileUpdateChange). For add and delete,
/// `diff` is the file's content (as Codex sends it); for update, the
/// unified diff.
struct file_update_change {
  enum class kind { add, remove, update };
  std::string path;
  kind type = kind::add;
  std::optional<std::string> move_path;  // update with a rename
  std::string diff;
};
void to_json(json& j, const file_update_change& x);
void from_json(const json& j, file_update_change& x);
const char* to_string(file_update_change::kind x);  // "add" | "delete" | "update"

struct file_change_item {
  std::string id;
  std::vector<file_update_change> changes;
  item_status status = item_status::in_progress;
};

/// The model's reasoning: its summary parts (and raw text, where a provider
/// sends it).
struct reasoning_item {
  std::string id;
  std::vector<std::string> summary;
  std::vector<std::string> content;
};

/// The thread's history was compacted here (thread/compact/start, or
/// automatically near the model's context window).
struct context_compaction_item {
  std::string id;
};

/// A call of a tool the client declared (dynamicTools): its arguments, and
/// the client's answer once it came. Its status is inProgress, completed or
/// failed (never declined).
struct dynamic_tool_call_item {
  std::string id;  // the model's call id
  std::string tool;
  std::optional<std::string> ns;
  json arguments;
  item_status status = item_status::in_progress;
  std::optional<json> content_items;
  std::optional<bool> success;
  std::optional<int64_t> duration_ms;
};

/// A call of an MCP server's tool by the model (issue 30): the server and
/// the tool as the server names them (not the model's qualified name), its
/// arguments, and once it ended the server's result (content,
/// structuredContent, _meta) or why there is none. Its status is
/// inProgress, completed or failed (never declined): a result the server
/// marks isError is failed, with the result.
struct mcp_tool_call_item {
  std::string id;  // the model's call id
  std::string server;
  std::string tool;
  json arguments;
  item_status status = item_status::in_progress;
  std::optional<json> result;          // McpToolCallResult
  std::optional<std::string> error;    // McpToolCallError's message
  std::optional<int64_t> duration_ms;
  /// The tool's readOnlyHint annotation as the server listed it (none:
  /// null). pluginId, appContext and mcpAppUi are always null: parley runs
  /// config.toml's servers only (no plugins, no apps).
  std::optional<bool> read_only_hint;
};

/// A review (review/start) began: `review` is what it looks at, as a
/// client shows it; `target` is the request's target (ReviewTarget), kept
/// for the rollout (Codex's EnteredReviewMode carries it).
struct entered_review_mode_item {
  std::string id;
  std::string review;
  json target;
};

/// A review ended: `review` is the reviewer's answer as text; `output` is
/// its structured form (Codex's ReviewOutputEvent), null when there is none
/// (the review was cut short).
struct exited_review_mode_item {
  std::string id;
  std::string review;
  json output;
};

using thread_item = std::variant<user_message_item, agent_message_item, command_execution_item,
                                 file_change_item, reasoning_item, context_compaction_item,
                                 dynamic_tool_call_item, entered_review_mode_item,
                                 exited_review_mode_item, mcp_tool_call_item>;

const std::string& item_id(const thread_item& x);

void to_json(json& j, const thread_item& x);
void from_json(const json& j, thread_item& x);

}  // namespace parley::protocol
