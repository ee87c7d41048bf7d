#include "bench/mock_model/responses_sse.hpp"

#include <nlohmann/json.hpp>

#include "bench/mock_model/ids.hpp"
#include "bench/mock_model/tool_calls.hpp"

namespace parley::mock_model {

namespace {

using json = nlohmann::json;

json message_item(const std::string& text, const std::string& status) {
  json content = json::array();
  if (status == "completed")
    content.push_back({{"type", "output_text"}, {"text", text}, {"annotations", json::array()}});
  return {{"type", "message"},
          {"id", fresh_id("msg")},
          {"role", "assistant"},
          {"status", status},
          {"content", content}};
}

json usage_json(const token_usage& usage) {
  return {{"input_tokens", usage.input_tokens},
          {"input_tokens_details", {{"cached_tokens", 0}}},
          {"output_tokens", usage.output_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", usage.input_tokens + usage.output_tokens}};
}

// Collects the events of one response, numbering them.
class responses_writer {
 public:
  void emit(json event, bool is_delta = false) {
    event["sequence_number"] = sequence_++;
    auto type = event.at("type").get<std::string>();
    events_.push_back({"event: " + type + "\ndata: " + event.dump() + "\n\n", is_delta});
  }

  // output_item.done alone (the plain stream), or added, deltas and done.
  void item(std::size_t index, json added, const std::vector<json>& middle, const json& done,
            bool plain) {
    if (!plain) emit({{"type", "response.output_item.added"}, {"output_index", index},
                      {"item", std::move(added)}});
    for (const auto& event : middle)
      emit(event, event.at("type").get<std::string>().find(".delta") != std::string::npos);
    emit({{"type", "response.output_item.done"}, {"output_index", index}, {"item", done}});
  }

  std::vector<sse_event> take() { return std::move(events_); }

 private:
  std::vector<sse_event> events_;
  std::size_t sequence_ = 0;
};

json message(responses_writer& w, std::size_t index, const std::string& text, bool plain) {
  json done = message_item(text, "completed");
  json added = done;
  added["status"] = "in_progress";
  added["content"] = json::array();
  const json where = {{"item_id", done["id"]}, {"output_index", index}, {"content_index", 0}};
  std::vector<json> middle;
  if (!plain) {
    auto event = [&where](const char* type) {
      json e = where;
      e["type"] = type;
      return e;
    };
    json part = {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}};
    middle.push_back(event("response.content_part.added"));
    middle.back()["part"] = part;
    for (auto& piece : word_pieces(text)) {
      middle.push_back(event("response.output_text.delta"));
      middle.back()["delta"] = piece;
    }
    middle.push_back(event("response.output_text.done"));
    middle.back()["text"] = text;
    part["text"] = text;
    middle.push_back(event("response.content_part.done"));
    middle.back()["part"] = part;
  }
  w.item(index, added, middle, done, plain);
  return done;
}

json reasoning(responses_writer& w, std::size_t index, const std::string& text) {
  std::string id = fresh_id("rs");
  json added = {{"type", "reasoning"}, {"id", id}, {"summary", json::array()}};
  json done = added;
  done["summary"].push_back({{"type", "summary_text"}, {"text", text}});
  const json where = {{"item_id", id}, {"output_index", index}, {"summary_index", 0}};
  auto event = [&where](const char* type) {
    json e = where;
    e["type"] = type;
    return e;
  };
  std::vector<json> middle;
  middle.push_back(event("response.reasoning_summary_part.added"));
  middle.back()["part"] = {{"type", "summary_text"}, {"text", ""}};
  for (auto& piece : word_pieces(text)) {
    middle.push_back(event("response.reasoning_summary_text.delta"));
    middle.back()["delta"] = piece;
  }
  middle.push_back(event("response.reasoning_summary_text.done"));
  middle.back()["text"] = text;
  middle.push_back(event("response.reasoning_summary_part.done"));
  middle.back()["part"] = {{"type", "summary_text"}, {"text", text}};
  w.item(index, added, middle, done, false);
  return done;
}

json call(responses_writer& w, std::size_t index, const tool_call& c, bool plain) {
  // Ids in this order (item, then call) keep the historic stream's numbering.
  json done = {{"type", c.custom ? "custom_tool_call" : "function_call"},
               {"id", fresh_id(c.custom ? "ctc" : "fc")},
               {"call_id", fresh_id("call")},  // fresh per call: Codex keys approvals on it
               {"name", c.name},
               {"status", "completed"}};
  if (!c.ns.empty()) done["namespace"] = c.ns;
  const char* field = c.custom ? "input" : "arguments";
  done[field] = c.arguments;  // a JSON string, as the Responses API sends it
  json added = done;
  added["status"] = "in_progress";
  added[field] = "";
  std::string prefix = c.custom ? "response.custom_tool_call_input" : "response.function_call_arguments";
  std::vector<json> middle;
  if (!plain) {
    for (auto& piece : even_pieces(c.arguments, 3))
      middle.push_back({{"type", prefix + ".delta"}, {"item_id", done["id"]},
                        {"output_index", index}, {"delta", piece}});
    middle.push_back({{"type", prefix + ".done"}, {"item_id", done["id"]},
                      {"output_index", index}, {field, c.arguments}});
  }
  w.item(index, added, middle, done, plain);
  return done;
}

}  // namespace

rendered_stream responses_stream(const stream_request& request) {
  rendered_stream out;
  responses_writer w;
  std::string id = fresh_id("resp");
  json response = {{"id", id},
                   {"object", "response"},
                   {"model", request.model},
                   {"status", "in_progress"},
                   {"output", json::array()}};
  w.emit({{"type", "response.created"}, {"response", response}});
  out.summary = id;
  if (request.failure) {
    response["status"] = "failed";
    response["error"] = {{"code", "server_error"}, {"message", *request.failure}};
    w.emit({{"type", "response.failed"}, {"response", response}});
    out.events = w.take();
    out.summary += " failed";
    return out;
  }

  json output = json::array();
  std::vector<action> actions = request.actions;
  if (actions.empty()) actions.push_back({action_kind::say, "done"});
  for (const auto& a : actions) {
    std::size_t index = output.size();
    json item;
    if (a.kind == action_kind::say)
      item = message(w, index, a.text, request.plain);
    else if (a.kind == action_kind::reason)
      item = reasoning(w, index, a.text);
    else
      item = call(w, index, tool_call_of(a, true), request.plain);
    out.summary += " " + item.at("type").get<std::string>();
    if (item.contains("call_id")) out.summary += " " + item.at("call_id").get<std::string>();
    output.push_back(std::move(item));
  }
  response["status"] = "completed";
  response["output"] = std::move(output);
  response["usage"] = usage_json(request.usage);
  w.emit({{"type", "response.completed"}, {"response", response}});
  out.events = w.take();
  return out;
}

}  // namespace parley::mock_model
