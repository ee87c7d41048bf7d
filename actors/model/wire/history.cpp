#include "actors/model/wire/history.hpp"

#include <string>
#include <unordered_set>

#include "actors/model/wire/json_fields.hpp"

namespace parley::wire {

namespace {

using namespace detail;

/// Copies `keys` of `from` that are present.
json pick(const json& from, std::initializer_list<const char*> keys) {
  json out = json::object();
  for (const char* k : keys)
    if (const json* v = field(from, k)) out[k] = *v;
  return out;
}

/// A message's content parts with their own fields (an assistant's
/// annotations and logprobs are the server's, not input).
json message_content(const json& content) {
  if (!content.is_array()) return content;  // a plain string is valid input
  json out = json::array();
  for (const auto& part : content)
    if (part.is_object()) out.push_back(pick(part, {"type", "text", "image_url", "detail"}));
  return out;
}

bool has_raw_reasoning(const json& item) {
  const json* content = array_field(item, "content");
  if (!content) return false;
  for (const auto& part : *content)
    if (string_or(part, "type") == "reasoning_text") return true;
  return false;
}

/// The item as a request carries it, or null when it carries none of it.
json as_input(const json& item) {
  auto type = string_or(item, "type");
  if (type == "message") {
    if (!string_field(item, "role")) return nullptr;
    json out = pick(item, {"type", "role"});
    if (const json* content = field(item, "content")) out["content"] = message_content(*content);
    return out;
  }
  if (type == "reasoning") {
    // With store false the server keeps nothing: a reasoning item goes back
    // only with its encrypted content (the API takes that and the summaries
    // back, not raw reasoning text).
    if (!string_field(item, "encrypted_content")) return nullptr;
    json out = pick(item, {"type", "summary", "encrypted_content"});
    if (field(item, "content") && !has_raw_reasoning(item)) out["content"] = item["content"];
    return out;
  }
  if (type == "function_call")
    return pick(item, {"type", "name", "namespace", "arguments", "call_id"});
  if (type == "custom_tool_call") return pick(item, {"type", "name", "input", "call_id", "status"});
  if (type == "local_shell_call") {
    json out = pick(item, {"type", "call_id", "status", "action"});
    if (!out.contains("call_id") && string_field(item, "id")) out["call_id"] = item["id"];
    return out;
  }
  if (type == "function_call_output" || type == "custom_tool_call_output")
    return pick(item, {"type", "call_id", "output"});
  return nullptr;
}

bool is_call(const std::string& type) {
  return type == "function_call" || type == "custom_tool_call" || type == "local_shell_call";
}

const char* output_type_for(const std::string& call_type) {
  return call_type == "custom_tool_call" ? "custom_tool_call_output" : "function_call_output";
}

}  // namespace

nlohmann::json request_history(const std::vector<nlohmann::json>& history) {
  struct sent_call {
    size_t at;  // index in out
    std::string id;
    std::string type;
  };
  std::vector<sent_call> calls;
  std::unordered_set<std::string> called, answered;
  json out = json::array();
  for (const auto& item : history) {
    json input = as_input(item);
    if (input.is_null()) continue;
    auto type = string_or(input, "type");
    const std::string* call_id = string_field(input, "call_id");
    if (is_call(type)) {
      // Without an id nothing could ever answer it; a repeated one is the same call.
      if (!call_id || !called.insert(*call_id).second) continue;
      calls.push_back({out.size(), *call_id, type});
    } else if (type == "function_call_output" || type == "custom_tool_call_output") {
      // Only the first answer to a call sent before it.
      if (!call_id || !called.count(*call_id) || !answered.insert(*call_id).second) continue;
    }
    out.push_back(std::move(input));
  }
  // Unanswered calls (an interrupt, a crash) get Codex's "aborted" right
  // after them; from the back, so earlier positions stay valid.
  for (auto c = calls.rbegin(); c != calls.rend(); ++c) {
    if (answered.count(c->id)) continue;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(c->at + 1),
               json{{"type", output_type_for(c->type)}, {"call_id", c->id}, {"output", "aborted"}});
  }
  return out;
}

}  // namespace parley::wire
