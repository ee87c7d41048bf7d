#include "actors/model/response_steps.hpp"

namespace parley {

using json = nlohmann::json;

namespace {

/// The visible text of an assistant message item.
std::string message_text(const json& item) {
  std::string text;
  auto content = item.find("content");
  if (content == item.end() || !content->is_array()) return text;
  for (const auto& part : *content) {
    if (!part.is_object()) continue;
    auto type = part.value("type", "");
    if ((type == "output_text" || type == "text") && part.contains("text")
        && part["text"].is_string())
      text += part["text"].get<std::string>();
  }
  return text;
}

std::optional<planned_step> say_step(const json& item) {
  if (item.value("role", "assistant") != "assistant") return std::nullopt;
  auto text = message_text(item);
  if (text.empty()) return std::nullopt;
  planned_step p;
  p.step.what = model_step::kind::say;
  p.step.deltas = {std::move(text)};
  if (item.contains("id") && item["id"].is_string()) p.step.streamed_item = item["id"];
  return p;
}

}  // namespace

response_plan plan_response(const std::vector<json>& output_items,
                            const std::set<std::string>& client_tools) {
  response_plan plan;
  for (const auto& item : output_items) {
    if (!item.is_object()) continue;
    if (item.value("type", "") == "message") {
      if (auto s = say_step(item)) plan.steps.push_back(std::move(*s));
      continue;
    }
    if (!wire::is_tool_call(item)) continue;  // reasoning and the like: history only
    plan.called_tools = true;
    auto call = wire::decode_tool_call(item, client_tools);
    if (call.kind == wire::call_kind::unknown || call.kind == wire::call_kind::invalid) {
      plan.immediate_outputs.push_back(wire::tool_output_item(call, call.error));
      continue;
    }
    planned_step p;
    p.step.what = call.kind == wire::call_kind::run         ? model_step::kind::run
                  : call.kind == wire::call_kind::patch     ? model_step::kind::patch
                  : call.kind == wire::call_kind::ask_user  ? model_step::kind::ask_user
                  : call.kind == wire::call_kind::permissions ? model_step::kind::request_permissions
                                                            : model_step::kind::call_tool;
    p.step.arguments = call.arguments;
    if (call.kind == wire::call_kind::client_tool) p.step.tool = call.tool_name;
    p.step.command = call.command;
    p.step.workdir = call.workdir;
    p.step.escalate = call.sandbox_permissions == "require_escalated";
    p.step.justification = call.justification;
    p.step.timeout_ms = call.timeout_ms;
    p.step.patch = call.patch;
    p.step.call_id = call.call_id;
    p.call = std::move(call);
    plan.steps.push_back(std::move(p));
  }
  // Said on the way to a tool call, a message is commentary; otherwise it
  // is the turn's answer.
  for (auto& p : plan.steps)
    if (p.step.what == model_step::kind::say)
      p.step.phase = plan.called_tools ? "commentary" : "final_answer";
  return plan;
}

}  // namespace parley
