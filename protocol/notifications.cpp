#include "protocol/notifications.hpp"

namespace parley::protocol {

const char* method_of(const notification& n) {
  if (auto* r = std::get_if<reasoning_delta>(&n))
    return r->summary ? "item/reasoning/summaryTextDelta" : "item/reasoning/textDelta";
  return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::method; }, n);
}

const std::string& thread_of(const notification& n) {
  return std::visit(
      [](const auto& x) -> const std::string& {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, thread_started>)
          return x.thread_.id;
        else
          return x.thread_id;
      },
      n);
}

void to_json(json& j, const thread_started& x) { j = json{{"thread", x.thread_}}; }

void to_json(json& j, const thread_status_changed& x) {
  j = json{{"threadId", x.thread_id}, {"status", x.status}};
}

void to_json(json& j, const turn_started& x) {
  j = json{{"threadId", x.thread_id}, {"turn", x.turn_}};
}

void to_json(json& j, const turn_completed& x) {
  j = json{{"threadId", x.thread_id}, {"turn", x.turn_}};
}

void to_json(json& j, const item_started& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"item", x.item},
           {"startedAtMs", x.started_at_ms}};
}

void to_json(json& j, const item_completed& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"item", x.item},
           {"completedAtMs", x.completed_at_ms}};
}

void to_json(json& j, const agent_message_delta& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"itemId", x.item_id},
           {"delta", x.delta}};
}

void to_json(json& j, const command_output_delta& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"itemId", x.item_id},
           {"delta", x.delta}};
}

void to_json(json& j, const mcp_tool_call_progress& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"itemId", x.item_id},
           {"message", x.message}};
}

void to_json(json& j, const server_request_resolved& x) {
  j = json{{"threadId", x.thread_id}, {"requestId", x.request}};
}

void to_json(json& j, const error_notification& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"error", x.error},
           {"willRetry", x.will_retry}};
}

void to_json(json& j, const thread_archived& x) { j = json{{"threadId", x.thread_id}}; }
void to_json(json& j, const thread_unarchived& x) { j = json{{"threadId", x.thread_id}}; }
void to_json(json& j, const thread_closed& x) { j = json{{"threadId", x.thread_id}}; }
void to_json(json& j, const thread_deleted& x) { j = json{{"threadId", x.thread_id}}; }
void to_json(json& j, const thread_reverted& x) { j = json{{"threadId", x.thread_id}}; }
void to_json(json& j, const thread_goal_updated& x) {
  j = json{{"threadId", x.thread_id}, {"turnId", nullptr}, {"goal", x.goal}};
}
void to_json(json& j, const thread_goal_cleared& x) { j = json{{"threadId", x.thread_id}}; }
void to_json(json& j, const thread_name_updated& x) {
  j = json{{"threadId", x.thread_id}, {"threadName", or_null(x.thread_name)}};
}

json params_of(const notification& n) {
  return std::visit([](const auto& x) { return json(x); }, n);
}

void to_json(json& j, const turn_diff_updated& x) {
  j = json{{"threadId", x.thread_id}, {"turnId", x.turn_id}, {"diff", x.diff}};
}

void to_json(json& j, const token_breakdown& x) {
  j = json{{"totalTokens", x.total_tokens},
           {"inputTokens", x.input_tokens},
           {"cachedInputTokens", x.cached_input_tokens},
           {"outputTokens", x.output_tokens},
           {"reasoningOutputTokens", x.reasoning_output_tokens}};
}

void from_json(const json& j, token_breakdown& x) {
  require_object(j);
  x.total_tokens = required<int64_t>(j, "totalTokens");
  x.input_tokens = required<int64_t>(j, "inputTokens");
  x.cached_input_tokens = required<int64_t>(j, "cachedInputTokens");
  x.output_tokens = required<int64_t>(j, "outputTokens");
  x.reasoning_output_tokens = required<int64_t>(j, "reasoningOutputTokens");
}

void to_json(json& j, const token_usage_updated& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"tokenUsage", {{"total", x.total}, {"last", x.last}, {"modelContextWindow", nullptr}}}};
}

void to_json(json& j, const reasoning_delta& x) {
  j = json{{"threadId", x.thread_id},
           {"turnId", x.turn_id},
           {"itemId", x.item_id},
           {"delta", x.delta},
           {x.summary ? "summaryIndex" : "contentIndex", x.index}};
}

void to_json(json& j, const command_exec_output_delta& x) {
  j = json{{"processId", x.process_id},
           {"stream", x.stream},
           {"deltaBase64", x.delta_base64},
           {"capReached", x.cap_reached}};
}

notification decode_notification(const std::string& method, const json& p) {
  require_object(p);
  if (method == thread_started::method) return thread_started{required<thread>(p, "thread")};
  if (method == thread_status_changed::method)
    return thread_status_changed{required<std::string>(p, "threadId"),
                                 required<thread_status>(p, "status")};
  if (method == turn_started::method)
    return turn_started{required<std::string>(p, "threadId"), required<turn>(p, "turn")};
  if (method == turn_completed::method)
    return turn_completed{required<std::string>(p, "threadId"), required<turn>(p, "turn")};
  if (method == item_started::method)
    return item_started{required<std::string>(p, "threadId"), required<std::string>(p, "turnId"),
                        required<thread_item>(p, "item"), required<int64_t>(p, "startedAtMs")};
  if (method == item_completed::method)
    return item_completed{required<std::string>(p, "threadId"), required<std::string>(p, "turnId"),
                          required<thread_item>(p, "item"),
                          required<int64_t>(p, "completedAtMs")};
  if (method == agent_message_delta::method)
    return agent_message_delta{required<std::string>(p, "threadId"),
                               required<std::string>(p, "turnId"),
                               required<std::string>(p, "itemId"), required<std::string>(p, "delta")};
  if (method == command_output_delta::method)
    return command_output_delta{required<std::string>(p, "threadId"),
                                required<std::string>(p, "turnId"),
                                required<std::string>(p, "itemId"),
                                required<std::string>(p, "delta")};
  if (method == mcp_tool_call_progress::method)
    return mcp_tool_call_progress{required<std::string>(p, "threadId"),
                                  required<std::string>(p, "turnId"),
                                  required<std::string>(p, "itemId"),
                                  required<std::string>(p, "message")};
  if (method == server_request_resolved::method)
    return server_request_resolved{required<std::string>(p, "threadId"),
                                   required<request_id>(p, "requestId")};
  if (method == error_notification::method)
    return error_notification{required<std::string>(p, "threadId"),
                              required<std::string>(p, "turnId"), required<turn_error>(p, "error"),
                              required<bool>(p, "willRetry")};
  if (method == thread_archived::method) return thread_archived{required<std::string>(p, "threadId")};
  if (method == thread_unarchived::method)
    return thread_unarchived{required<std::string>(p, "threadId")};
  if (method == thread_closed::method) return thread_closed{required<std::string>(p, "threadId")};
  if (method == thread_deleted::method) return thread_deleted{required<std::string>(p, "threadId")};
  if (method == thread_reverted::method)
    return thread_reverted{required<std::string>(p, "threadId")};
  if (method == thread_goal_updated::method)
    return thread_goal_updated{required<std::string>(p, "threadId"),
                               required<thread_goal>(p, "goal")};
  if (method == thread_goal_cleared::method)
    return thread_goal_cleared{required<std::string>(p, "threadId")};
  if (method == thread_name_updated::method)
    return thread_name_updated{required<std::string>(p, "threadId"),
                               optional<std::string>(p, "threadName")};
  if (method == token_usage_updated::method) {
    auto usage = required<json>(p, "tokenUsage");
    return token_usage_updated{required<std::string>(p, "threadId"),
                               required<std::string>(p, "turnId"),
                               required<token_breakdown>(usage, "total"),
                               required<token_breakdown>(usage, "last")};
  }
  if (method == "item/reasoning/summaryTextDelta" || method == "item/reasoning/textDelta") {
    bool summary = method == "item/reasoning/summaryTextDelta";
    return reasoning_delta{required<std::string>(p, "threadId"), required<std::string>(p, "turnId"),
                           required<std::string>(p, "itemId"), required<std::string>(p, "delta"),
                           required<int64_t>(p, summary ? "summaryIndex" : "contentIndex"),
                           summary};
  }
  if (method == turn_diff_updated::method)
    return turn_diff_updated{required<std::string>(p, "threadId"),
                             required<std::string>(p, "turnId"), required<std::string>(p, "diff")};
  if (method == command_exec_output_delta::method)
    return command_exec_output_delta{"", required<std::string>(p, "processId"),
                                     required<std::string>(p, "stream"),
                                     required<std::string>(p, "deltaBase64"),
                                     required<bool>(p, "capReached")};
  throw decode_error("unknown notification `" + method + "`");
}

}  // namespace parley::protocol
