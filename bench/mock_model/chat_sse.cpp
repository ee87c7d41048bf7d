#include "bench/mock_model/chat_sse.hpp"

#include <ctime>
#include <nlohmann/json.hpp>

#include "bench/mock_model/ids.hpp"
#include "bench/mock_model/tool_calls.hpp"

namespace parley::mock_model {

namespace {

using json = nlohmann::json;

class chat_writer {
 public:
  chat_writer(std::string id, std::string model)
      : id_(std::move(id)), model_(std::move(model)), created_(std::time(nullptr)) {}

  void raw(const json& data, bool is_delta) {
    events_.push_back({"data: " + data.dump() + "\n\n", is_delta});
  }

  json chunk() const {
    return {{"id", id_}, {"object", "chat.completion.chunk"}, {"created", created_},
            {"model", model_}};
  }

  void delta(json delta, bool is_delta = true, json finish_reason = nullptr) {
    json c = chunk();
    c["choices"] = json::array(
        {{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish_reason)}}});
    raw(c, is_delta);
  }

  std::vector<sse_event> take() {
    events_.push_back({"data: [DONE]\n\n", false});
    return std::move(events_);
  }
  std::vector<sse_event> take_without_done() { return std::move(events_); }

 private:
  std::string id_;
  std::string model_;
  std::time_t created_;
  std::vector<sse_event> events_;
};

}  // namespace

rendered_stream chat_stream(const stream_request& request) {
  rendered_stream out;
  std::string id = fresh_id("chatcmpl");
  chat_writer w(id, request.model);
  out.summary = id;
  w.delta({{"role", "assistant"}, {"content", ""}}, false);
  if (request.failure) {
    w.raw({{"error", {{"message", *request.failure}, {"type", "server_error"},
                      {"code", "server_error"}}}},
          false);
    out.events = w.take_without_done();
    out.summary += " error";
    return out;
  }

  std::vector<action> actions = request.actions;
  if (actions.empty()) actions.push_back({action_kind::say, "done"});
  int calls = 0;
  for (const auto& a : actions) {
    if (a.kind == action_kind::say || a.kind == action_kind::reason) {
      const char* field = a.kind == action_kind::say ? "content" : "reasoning_content";
      for (auto& piece : word_pieces(a.text)) w.delta({{field, piece}});
      out.summary += a.kind == action_kind::say ? " content" : " reasoning";
      continue;
    }
    auto c = tool_call_of(a, false);
    int index = calls++;
    std::string call_id = fresh_id("call");
    w.delta({{"tool_calls", json::array({{{"index", index}, {"id", call_id}, {"type", "function"},
                                          {"function", {{"name", c.name}, {"arguments", ""}}}}})}});
    for (auto& piece : even_pieces(c.arguments, 3))
      w.delta({{"tool_calls",
                json::array({{{"index", index}, {"function", {{"arguments", piece}}}}})}});
    out.summary += " tool_call " + call_id;
  }
  w.delta(json::object(), false, calls > 0 ? "tool_calls" : "stop");
  if (request.include_usage) {
    json c = w.chunk();
    c["choices"] = json::array();
    c["usage"] = {{"prompt_tokens", request.usage.input_tokens},
                  {"completion_tokens", request.usage.output_tokens},
                  {"total_tokens", request.usage.input_tokens + request.usage.output_tokens}};
    w.raw(c, false);
  }
  out.events = w.take();
  return out;
}

}  // namespace parley::mock_model
