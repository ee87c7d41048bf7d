#include "actors/model/wire/chat_stream.hpp"

#include <utility>

#include "actors/model/wire/json_fields.hpp"
#include "actors/model/wire/usage.hpp"

namespace parley::wire {

namespace {

using namespace detail;

// An error code may be a string ("rate_limit_exceeded") or a number (429).
std::string code_text(const json& error) {
  const json* code = field(error, "code");
  if (!code || code->is_null()) return {};
  return code->is_string() ? code->get<std::string>() : dump(*code);
}

// Servers disagree on the reasoning field's name.
const std::string* reasoning_text(const json& delta) {
  const std::string* text = string_field(delta, "reasoning_content");
  return text ? text : string_field(delta, "reasoning");
}

}  // namespace

std::vector<stream_event> chat_stream::feed(std::string_view bytes) {
  std::vector<stream_event> out;
  if (ended_) return out;
  for (const auto& sse : sse_.feed(bytes)) {
    on_event(sse, out);
    if (ended_) return out;
  }
  if (sse_.error()) end_with(stream_error{*sse_.error()}, out);
  return out;
}

std::vector<stream_event> chat_stream::finish() {
  std::vector<stream_event> out;
  if (!ended_ && !finish_reason_.empty()) complete(out);
  return out;
}

void chat_stream::on_event(const sse_event& sse, std::vector<stream_event>& out) {
  if (sse.data == "[DONE]") return complete(out);
  auto chunk = json::parse(sse.data, nullptr, false);
  if (chunk.is_discarded()) {
    return end_with(stream_error{"a chat completion chunk is not JSON: " + preview(sse.data)}, out);
  }
  if (!chunk.is_object()) {
    return end_with(
        stream_error{"a chat completion chunk is not a JSON object: " + preview(sse.data)}, out);
  }
  on_chunk(chunk, out);
}

void chat_stream::on_chunk(const json& chunk, std::vector<stream_event>& out) {
  if (const json* error = object_field(chunk, "error")) {
    return end_with(response_failed{string_or(*error, "message", "the model provider sent an error"),
                                    code_text(*error)},
                    out);
  }
  if (!created_) {
    created_ = true;
    response_id_ = string_or(chunk, "id");
    out.push_back(response_created{response_id_});
  }
  if (const json* usage = object_field(chunk, "usage")) usage_ = chat_usage(*usage);
  const json* choices = field(chunk, "choices");
  if (!choices || choices->is_null()) return;
  if (!choices->is_array()) {
    return end_with(stream_error{"a chat completion chunk's 'choices' is not an array"}, out);
  }
  for (const auto& choice : *choices) {
    // parley asks for one choice; others (n > 1) are not ours.
    if (int_field(choice, "index").value_or(0) != 0) continue;
    if (const json* delta = object_field(choice, "delta")) on_delta(*delta, out);
    if (const std::string* reason = string_field(choice, "finish_reason")) finish_reason_ = *reason;
  }
}

void chat_stream::on_delta(const json& delta, std::vector<stream_event>& out) {
  const std::string* reasoning = reasoning_text(delta);
  if (reasoning && !reasoning->empty()) {
    if (!reasoning_started_) {
      reasoning_started_ = true;
      out.push_back(output_item_added{
          {{"type", "reasoning"}, {"id", item_id("rs_")}, {"summary", json::array()}}});
    }
    reasoning_ += *reasoning;
    out.push_back(reasoning_delta{item_id("rs_"), *reasoning, false, 0});
  }
  const std::string* content = string_field(delta, "content");
  if (content && !content->empty()) {
    if (!text_started_) {
      text_started_ = true;
      out.push_back(output_item_added{{{"type", "message"},
                                       {"id", item_id("msg_")},
                                       {"role", "assistant"},
                                       {"content", json::array()}}});
    }
    text_ += *content;
    out.push_back(text_delta{item_id("msg_"), *content});
  }
  if (const json* calls = array_field(delta, "tool_calls")) {
    std::int64_t position = 0;
    for (const auto& call : *calls) on_tool_call(call, position++);
  }
}

void chat_stream::on_tool_call(const json& call, std::int64_t position) {
  // A server that leaves out the index sends each call whole, in order.
  auto& partial = calls_[int_field(call, "index").value_or(position)];
  if (const std::string* id = string_field(call, "id"); id && !id->empty()) partial.id = *id;
  const json* function = object_field(call, "function");
  if (!function) return;
  if (const std::string* name = string_field(*function, "name"); name && !name->empty()) {
    partial.name = *name;
  }
  if (const json* arguments = field(*function, "arguments")) {
    if (arguments->is_string()) {
      partial.arguments += arguments->get_ref<const std::string&>();
    } else if (arguments->is_object()) {
      partial.arguments += dump(*arguments);  // a server that sends them parsed
    }
  }
}

void chat_stream::complete(std::vector<stream_event>& out) {
  if (!reasoning_.empty()) {
    out.push_back(output_item_done{
        {{"type", "reasoning"},
         {"id", item_id("rs_")},
         {"summary", json::array()},
         {"content", json::array({{{"type", "reasoning_text"}, {"text", reasoning_}}})}}});
  }
  if (!text_.empty()) {
    out.push_back(output_item_done{
        {{"type", "message"},
         {"id", item_id("msg_")},
         {"role", "assistant"},
         {"content", json::array({{{"type", "output_text"}, {"text", text_}}})}}});
  }
  for (const auto& [index, call] : calls_) {
    if (call.name.empty()) {
      return end_with(stream_error{"tool call " + std::to_string(index) + " has no function name"},
                      out);
    }
    std::string call_id = call.id.empty() ? "call_" + std::to_string(index) : call.id;
    out.push_back(output_item_done{{{"type", "function_call"},
                                    {"call_id", call_id},
                                    {"name", call.name},
                                    {"arguments", call.arguments}}});
  }
  completed_ = true;
  end_with(response_completed{response_id_, usage_}, out);
}

void chat_stream::end_with(stream_event event, std::vector<stream_event>& out) {
  out.push_back(std::move(event));
  ended_ = true;
}

std::string chat_stream::item_id(const char* prefix) const {
  return prefix + (response_id_.empty() ? std::string("chat") : response_id_);
}

}  // namespace parley::wire
