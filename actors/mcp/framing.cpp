#include "actors/mcp/framing.hpp"

#include <array>

namespace parley::mcp {

namespace framing_impl {

std::string dump_line(const json& j) {
  // Replacement of invalid UTF-8: a tool argument must not throw here.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace framing_impl

bool supported_protocol_version(const std::string& version) {
  static const std::array<const char*, 4> known{"2024-11-05", "2025-03-26", "2025-06-18",
                                                "2025-11-25"};
  for (auto* v : known)
    if (version == v) return true;
  return false;
}

json initialize_params(const std::string& client_version) {
  return {{"protocolVersion", requested_protocol_version},
          // Elicitation in form and URL mode, declared as Codex 0.169
          // declares it (with 2025-06-18 as the revision asked for): a
          // server's question is shown to the thread whose call asked.
          // No roots, no sampling.
          {"capabilities",
           {{"elicitation", {{"form", json::object()}, {"url", json::object()}}}}},
          {"clientInfo", {{"name", "parley"}, {"title", "parley"}, {"version", client_version}}}};
}

std::string request_line(int64_t id, const std::string& method, const json& params) {
  json j = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) j["params"] = params;
  return framing_impl::dump_line(j);
}

std::string notification_line(const std::string& method, const json& params) {
  json j = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) j["params"] = params;
  return framing_impl::dump_line(j);
}

std::string result_line(const json& id, const json& result) {
  return framing_impl::dump_line({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::string error_line(const json& id, int code, const std::string& message) {
  return framing_impl::dump_line({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

parsed_line parse_line(std::string_view line) {
  parsed_line out;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return out;
  json j = json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded()) {
    out.problem = "not JSON";
    return out;
  }
  if (j.is_array()) {
    // JSON-RPC batches were dropped from MCP in 2025-06-18.
    out.problem = "a JSON-RPC batch (MCP sends one message per line)";
    return out;
  }
  if (!j.is_object()) {
    out.problem = "not a JSON object";
    return out;
  }
  auto v = j.find("jsonrpc");
  if (v == j.end() || *v != "2.0") {
    out.problem = "no \"jsonrpc\": \"2.0\"";
    return out;
  }
  incoming m;
  auto id = j.find("id");
  bool has_id = id != j.end();
  if (has_id && !id->is_string() && !id->is_number_integer()) {
    out.problem = "an id that is neither a string nor an integer";
    return out;
  }
  if (has_id) m.id = *id;
  auto method = j.find("method");
  if (method != j.end()) {
    if (!method->is_string()) {
      out.problem = "a method that is not a string";
      return out;
    }
    m.method = method->get<std::string>();
    m.what = has_id ? incoming::kind::request : incoming::kind::notification;
    if (auto p = j.find("params"); p != j.end()) m.params = *p;
    out.message = std::move(m);
    return out;
  }
  if (!has_id) {
    out.problem = "neither a method nor an id";
    return out;
  }
  auto result = j.find("result");
  auto error = j.find("error");
  if ((result != j.end()) == (error != j.end())) {
    out.problem = "a response needs exactly one of result and error";
    return out;
  }
  if (result != j.end()) {
    m.what = incoming::kind::response;
    m.result = *result;
  } else {
    if (!error->is_object() || !error->contains("code") || !(*error)["code"].is_number_integer()
        || !error->contains("message") || !(*error)["message"].is_string()) {
      out.problem = "an error without an integer code and a message";
      return out;
    }
    m.what = incoming::kind::error_response;
    m.error_code = (*error)["code"].get<int>();
    m.error_message = (*error)["message"].get<std::string>();
  }
  out.message = std::move(m);
  return out;
}

bool line_splitter::feed(std::string_view data, std::vector<std::string>& out) {
  if (overflowed_) return false;
  while (!data.empty()) {
    auto nl = data.find('\n');
    auto piece = data.substr(0, nl);
    if (partial_.size() + piece.size() > limit_) {
      overflowed_ = true;
      partial_.clear();
      partial_.shrink_to_fit();
      return false;
    }
    partial_.append(piece);
    if (nl == std::string_view::npos) break;
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    out.push_back(std::move(partial_));
    partial_.clear();
    data.remove_prefix(nl + 1);
  }
  return true;
}

}  // namespace parley::mcp
