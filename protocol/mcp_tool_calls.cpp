#include "protocol/mcp_tool_calls.hpp"

#include <cmath>
#include <cstdio>

#include "protocol/base64.hpp"
#include "protocol/prompt_image.hpp"

namespace parley::protocol {

namespace {

/// The server's JSON in the server's key order: the model reads what Codex
/// sends it, which keeps that order.
using ordered = nlohmann::ordered_json;

template <class Json>
std::string dumped(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const char* const audio_omitted = "<audio content omitted because you do not support audio input>";
const char* const image_unreadable = "image content omitted because it could not be processed";
const char* const image_too_large
    = "image content omitted because it exceeded the supported size limit; use a smaller image";

bool is_audio(const json& block) {
  return block.is_object() && block.value("type", json()) == "audio" && block.contains("data")
         && block["data"].is_string();
}

/// The detail a server asks for an image (Codex's `codex/imageDetail`);
/// "high" otherwise.
std::string image_detail(const ordered& block) {
  if (auto m = block.find("_meta"); m != block.end() && m->is_object()) {
    auto d = m->value("codex/imageDetail", ordered());
    if (d.is_string() && (d == "auto" || d == "low" || d == "high" || d == "original"))
      return d.get<std::string>();
  }
  return "high";
}

/// An image block as Codex passes it: decoded, scaled down to the limits
/// of detail "high" when bigger, and sent as an input_image with a data:
/// URL of what was made (its type the image's own, whatever mimeType
/// said); or the text saying why it was left out. "original" is sent as
/// "high", at high's limits, as Codex does for a model that cannot take
/// original detail (parley knows of none that can).
json image_part(const ordered& block) {
  auto detail = image_detail(block);
  if (detail == "low")
    return {{"type", "input_text"},
            {"text", "image content omitted because detail 'low' is not supported; use 'high', "
                     "'original', or 'auto'"}};
  // The data is base64, or a data: URL of base64 (the image is read from
  // either; the URL's own type is not trusted).
  const auto& data = block["data"].get_ref<const std::string&>();
  std::string_view payload = data;
  if (data.rfind("data:", 0) == 0) {
    auto comma = data.find(',');
    bool base64 = comma != std::string::npos && comma >= 7 && data.compare(comma - 7, 7, ";base64") == 0;
    payload = base64 ? payload.substr(comma + 1) : std::string_view{};
  }
  std::string why;
  auto bytes = base64_decode(payload, why);
  if (!bytes) return {{"type", "input_text"}, {"text", image_unreadable}};
  auto image = prepare_prompt_image(*bytes, high_detail_limits);
  using outcome = prepared_image::outcome;
  if (image.result != outcome::ready)
    return {{"type", "input_text"},
            {"text", image.result == outcome::too_large ? image_too_large : image_unreadable}};
  return {{"type", "input_image"},
          {"image_url", "data:" + image.mime + ";base64," + base64_encode(image.bytes)},
          {"detail", detail == "original" ? std::string("high") : detail}};
}

/// One content block as a Responses content part: text, image and audio
/// blocks as Codex reads them (a field of the wrong type makes the block
/// unknown), anything else as its JSON text.
json content_part(const ordered& block) {
  auto type = block.is_object() ? block.value("type", std::string{}) : std::string{};
  if (type == "text" && block.contains("text") && block["text"].is_string())
    return {{"type", "input_text"}, {"text", block["text"].get<std::string>()}};
  auto mime = block.is_object() ? block.value("mimeType", ordered()) : ordered();
  bool media = block.is_object() && block.contains("data") && block["data"].is_string()
               && (mime.is_null() || mime.is_string());
  if (type == "image" && media) return image_part(block);
  if (type == "audio" && media) return {{"type", "input_text"}, {"text", audio_omitted}};
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
  out["content"] = json::array();
  if (result.is_object() && result.value("content", json()).is_array())
    for (const auto& block : result["content"])
      // The model takes no audio: Codex shows the item what it was told.
      out["content"].push_back(is_audio(block) ? json{{"type", "text"}, {"text", audio_omitted}}
                                               : block);
  out["structuredContent"] = result.is_object() ? result.value("structuredContent", json()) : json();
  out["_meta"] = result.is_object() ? result.value("_meta", json()) : json();
  return out;
}

std::string mcp_wall_time_header(double wall_seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "Wall time: %.4f seconds\nOutput:", wall_seconds < 0 ? 0.0 : wall_seconds);
  return buf;
}

mcp_model_output mcp_output_of_result_text(std::string_view result_text, double wall_seconds) {
  auto result = ordered::parse(result_text.begin(), result_text.end(), nullptr, false);
  mcp_model_output out;
  out.success = !(result.is_object() && result.value("isError", ordered()).is_boolean()
                  && result["isError"].get<bool>());
  auto header = mcp_wall_time_header(wall_seconds);
  if (result.is_object()) {
    auto s = result.find("structuredContent");
    if (s != result.end() && !s->is_null()) {
      out.text = header + "\n" + dumped(*s);
      return out;
    }
  }
  json parts = json::array({{{"type", "input_text"}, {"text", header}}});
  if (result.is_object() && result.value("content", ordered()).is_array())
    for (const auto& block : result["content"]) parts.push_back(content_part(block));
  for (const auto& p : parts) {
    if (p["type"] != "input_text") continue;
    if (!out.text.empty()) out.text += '\n';
    out.text += p["text"].get<std::string>();
  }
  out.content_items = std::move(parts);
  return out;
}

mcp_model_output mcp_output_of_result(const json& result, double wall_seconds) {
  return mcp_output_of_result_text(dumped(result), wall_seconds);
}

mcp_model_output mcp_output_of_error(const std::string& message, double wall_seconds) {
  return mcp_output_of_result(
      json{{"content", json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}},
      wall_seconds);
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
