#pragma once
// Server -> client notifications (protocol.md §3). Each struct names its
// method; `notification` is the closed set the runtime emits.

#include <cstdint>
#include <string>
#include <variant>

#include "protocol/jsonrpc.hpp"
#include "protocol/thread_extras.hpp"
#include "protocol/types.hpp"

namespace parley::protocol {

struct thread_started {
  static constexpr const char* method = "thread/started";
  thread thread_;
};

struct thread_status_changed {
  static constexpr const char* method = "thread/status/changed";
  std::string thread_id;
  thread_status status;
};

struct turn_started {
  static constexpr const char* method = "turn/started";
  std::string thread_id;
  turn turn_;
};

struct turn_completed {
  static constexpr const char* method = "turn/completed";
  std::string thread_id;
  turn turn_;
};

struct item_started {
  static constexpr const char* method = "item/started";
  std::string thread_id;
  std::string turn_id;
  thread_item item;
  int64_t started_at_ms = 0;
};

struct item_completed {
  static constexpr const char* method = "item/completed";
  std::string thread_id;
  std::string turn_id;
  thread_item item;
  int64_t completed_at_ms = 0;
};

struct agent_message_delta {
  static constexpr const char* method = "item/agentMessage/delta";
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  std::string delta;
};

struct command_output_delta {
  static constexpr const char* method = "item/commandExecution/outputDelta";
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  std::string delta;
};

/// What an MCP server reported of a call in progress (its
/// notifications/progress for the call's progressToken), as one line.
struct mcp_tool_call_progress {
  static constexpr const char* method = "item/mcpToolCall/progress";
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  std::string message;
};

struct server_request_resolved {
  static constexpr const char* method = "serverRequest/resolved";
  std::string thread_id;
  request_id request;
};

struct error_notification {
  static constexpr const char* method = "error";
  std::string thread_id;
  std::string turn_id;
  turn_error error;
  bool will_retry = false;
};

/// thread/archived, thread/unarchived, thread/closed: `{threadId}`.
struct thread_archived {
  static constexpr const char* method = "thread/archived";
  std::string thread_id;
};
struct thread_unarchived {
  static constexpr const char* method = "thread/unarchived";
  std::string thread_id;
};
struct thread_closed {
  static constexpr const char* method = "thread/closed";
  std::string thread_id;
};
/// thread/goal/updated: the goal as set; turnId null (set by a client).
struct thread_goal_updated {
  static constexpr const char* method = "thread/goal/updated";
  std::string thread_id;
  thread_goal goal;
};
/// thread/goal/cleared: `{threadId}`.
struct thread_goal_cleared {
  static constexpr const char* method = "thread/goal/cleared";
  std::string thread_id;
};
/// thread/reverted: `{threadId}`, once its history keeps only the turns
/// before the one thread/revert named.
struct thread_reverted {
  static constexpr const char* method = "thread/reverted";
  std::string thread_id;
};
/// thread/deleted: `{threadId}`, once its rollout and index entry are gone.
struct thread_deleted {
  static constexpr const char* method = "thread/deleted";
  std::string thread_id;
};

struct thread_name_updated {
  static constexpr const char* method = "thread/name/updated";
  std::string thread_id;
  std::optional<std::string> thread_name;
};

/// The turn's aggregated unified diff, after a file change was applied.
struct turn_diff_updated {
  static constexpr const char* method = "turn/diff/updated";
  std::string thread_id;
  std::string turn_id;
  std::string diff;
};

/// A piece of the model's reasoning: its summary (`summary`, part
/// `index`), or its raw text (content part `index`).
struct reasoning_delta {
  /// item/reasoning/textDelta when not `summary` (method_of says which).
  static constexpr const char* method = "item/reasoning/summaryTextDelta";
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  std::string delta;
  int64_t index = 0;
  bool summary = true;
};

/// Tokens a model used: one request's (`last`) and the thread's so far (`total`).
struct token_breakdown {
  int64_t total_tokens = 0;
  int64_t input_tokens = 0;
  int64_t cached_input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t reasoning_output_tokens = 0;
};

struct token_usage_updated {
  static constexpr const char* method = "thread/tokenUsage/updated";
  std::string thread_id;
  std::string turn_id;
  token_breakdown total;
  token_breakdown last;
};

/// A chunk of a command/exec process's output (issue 29). It belongs to a
/// connection, not a thread: `thread_id` stays empty.
struct command_exec_output_delta {
  static constexpr const char* method = "command/exec/outputDelta";
  std::string thread_id;  // always empty
  std::string process_id;
  std::string stream;        // "stdout" | "stderr"
  std::string delta_base64;  // the bytes, base64 as on the wire
  bool cap_reached = false;
};

using notification =
    std::variant<thread_started, thread_status_changed, turn_started, turn_completed, item_started,
                 item_completed, agent_message_delta, command_output_delta,
                 server_request_resolved, error_notification, thread_archived, thread_unarchived,
                 thread_closed, thread_name_updated, turn_diff_updated, token_usage_updated, reasoning_delta,
                 command_exec_output_delta, thread_deleted,
                 thread_goal_updated, thread_goal_cleared, thread_reverted,
                 mcp_tool_call_progress>;

const char* method_of(const notification& n);
/// The thread a notification belongs to.
const std::string& thread_of(const notification& n);

void to_json(json& j, const thread_started& x);
void to_json(json& j, const thread_status_changed& x);
void to_json(json& j, const turn_started& x);
void to_json(json& j, const turn_completed& x);
void to_json(json& j, const item_started& x);
void to_json(json& j, const item_completed& x);
void to_json(json& j, const agent_message_delta& x);
void to_json(json& j, const command_output_delta& x);
void to_json(json& j, const mcp_tool_call_progress& x);
void to_json(json& j, const server_request_resolved& x);
void to_json(json& j, const error_notification& x);
void to_json(json& j, const thread_archived& x);
void to_json(json& j, const thread_unarchived& x);
void to_json(json& j, const thread_closed& x);
void to_json(json& j, const thread_deleted& x);
void to_json(json& j, const thread_reverted& x);
void to_json(json& j, const thread_goal_updated& x);
void to_json(json& j, const thread_goal_cleared& x);
void to_json(json& j, const thread_name_updated& x);
void to_json(json& j, const turn_diff_updated& x);
void to_json(json& j, const token_breakdown& x);
void from_json(const json& j, token_breakdown& x);
void to_json(json& j, const token_usage_updated& x);
void to_json(json& j, const reasoning_delta& x);
void to_json(json& j, const command_exec_output_delta& x);

/// The params object of a notification.
json params_of(const notification& n);

/// Decodes a notification from its method and params (clients and tests).
notification decode_notification(const std::string& method, const json& params);

}  // namespace parley::protocol
