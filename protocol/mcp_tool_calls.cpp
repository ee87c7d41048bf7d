#include "protocol/mcp_tool_calls.hpp"

#include <cmath>
#include <cstdio>

namespace parley::protocol {

namespace {

std::string dumped(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// One content block as a Responses content part.
json content_part(const json& block, bool& image) {
  auto type = block.is_object() ? block.value("type", std::string{}) : std::string{};
  if (type == "text" && block.contains("text") && block["text"].is_string())
    return {{"type", "input_text"}, {"text", block["text"]}};
  if (type == "image" && block.contains("data") && block["data"].is_string()) {
    image = true;
    auto data = block["data"].get<std::string>();
    if (data.rfind("data:", 0) != 0) {
      auto mime = block.contains("mimeType") && block["mimeType"].is_string()
                      ? block["mimeType"].get<std::string>()
                      : std::string{"application/octet-stream"};
      data = "data:" + mime + ";base64," + data;
    }
    json part = {{"type", "input_image"}, {"image_url", data}};
    // A server may ask for a detail level (Codex's `codex/imageDetail`).
    if (auto m = block.find("_meta"); m != block.end() && m->is_object()) {
      auto d = m->value("codex/imageDetail", json());
      if (d.is_string() && (d == "auto" || d == "low" || d == "high" || d == "original"))
        part["detail"] = d;
    }
    return part;
  }
  return {{"type", "input_text"}, {"text", dumped(block)}};
}

std::string number_text(const json& n) {
  if (n.is_number_integer() || n.is_number_unsigned()) return n.dump();
  double d = n.get<double>();
  if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

}  // namespace

bool mcp_result_is_error(const json& result) {
  return result.is_object() && result.value("isError", json()).is_boolean()
         && result["isError"].get<bool>();
}

json mcp_item_result(const json& result) {
  json out = json::object();
  out["content"] = result.is_object() && result.value("content", json()).is_array()
                       ? result["content"]
                       : json::array();
  if (result.is_object() && result.contains("structuredContent"))
    out["structuredContent"] = result["structuredContent"];
  if (result.is_object() && result.contains("_meta")) out["_meta"] = result["_meta"];
  return out;
}

mcp_model_output mcp_output_of_result(const json& result) {
  mcp_model_output out;
  out.success = !mcp_result_is_error(result);
  if (result.is_object()) {
    auto s = result.find("structuredContent");
    if (s != result.end() && !s->is_null()) {
      out.text = dumped(*s);
      return out;
    }
  }
  auto content = mcp_item_result(result)["content"];
  bool image = false;
  json parts = json::array();
  for (const auto& block : content) parts.push_back(content_part(block, image));
  if (!image) {
    out.text = dumped(content);
    return out;
  }
  for (const auto& p : parts)
    if (p["type"] == "input_text") out.text += p["text"].get<std::string>();
  out.content_items = std::move(parts);
  return out;
}

mcp_model_output mcp_output_of_error(const std::string& message) {
  return mcp_output_of_result(
      {{"content", json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}});
}

std::string mcp_progress_message(const json& params) {
  if (!params.is_object()) return {};
  if (auto m = params.find("message"); m != params.end() && m->is_string() && !m->empty())
    return m->get<std::string>();
  auto progress = params.value("progress", json());
  if (!progress.is_number()) return {};
  auto total = params.value("total", json());
  return total.is_number() ? number_text(progress) + "/" + number_text(total)
                           : number_text(progress);
}

}  // namespace parley::protocol
