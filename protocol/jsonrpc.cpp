#include "protocol/jsonrpc.hpp"

#include "protocol/bounded_json.hpp"
#include "protocol/jsonrpc_text.hpp"

#include <initializer_list>
#include <string_view>

namespace parley::protocol {

std::string request_id::to_string() const {
  if (auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

void to_json(json& j, const request_id& x) {
  if (auto* i = std::get_if<int64_t>(&x.value))
    j = *i;
  else
    j = std::get<std::string>(x.value);
}

void from_json(const json& j, request_id& x) {
  if (j.is_string())
    x.value = j.get<std::string>();
  else if (j.is_number_integer())
    x.value = j.get<int64_t>();
  else
    throw_invalid_type(j, "a string or an integer");
}

namespace {

std::optional<request_id> id_of(const json& j) {
  if (j.is_string()) return request_id{j.get<std::string>()};
  // Unsigned ids above INT64_MAX are not i64 and are rejected like Codex does.
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  if (j.is_number_integer()) return request_id{j.get<int64_t>()};
  return std::nullopt;
}

const std::string too_deep_message =
    "recursion limit exceeded: JSON nested deeper than " + std::to_string(max_json_depth) + " levels";

}  // namespace

std::variant<incoming_message, envelope_error> parse_message(std::string_view line) {
  auto parsed = parse_bounded(line);
  auto& j = parsed.value;
  if (j.is_discarded()) return envelope_error{"not valid JSON"};
  if (j.is_array()) return envelope_error{"batch requests are not supported"};
  if (!j.is_object()) return envelope_error{"a message must be a JSON object"};

  incoming_message m;
  auto id_it = j.find("id");
  auto method_it = j.find("method");
  bool has_id = id_it != j.end();
  if (has_id) {
    auto id = id_of(*id_it);
    if (!id) return envelope_error{"id must be a string or an integer"};
    m.id = std::move(*id);
  }
  if (method_it != j.end()) {
    if (!method_it->is_string()) return envelope_error{"method must be a string"};
    m.method = method_it->get<std::string>();
    m.type = has_id ? incoming_message::kind::request : incoming_message::kind::notification;
    if (parsed.too_deep) {  // answered for its id, the params never looked at
      if (!has_id) return envelope_error{too_deep_message};
      m.rejected = rpc_error{rpc_code::invalid_request,
                             std::string{"Invalid request: "} + too_deep_message, {}};
      return m;
    }
    auto p = j.find("params");
    m.has_params = p != j.end() && !p->is_null();
    if (m.has_params) m.params = *p;
    return m;
  }
  if (!has_id) return envelope_error{"neither a request, a notification nor a response"};
  if (parsed.too_deep && (j.contains("result") || j.contains("error"))) {
    // What the peer answered is unknown: an error answer fails closed.
    m.type = incoming_message::kind::error_response;
    m.error = rpc_error{rpc_code::invalid_request, too_deep_message, {}};
    return m;
  }
  if (auto r = j.find("result"); r != j.end()) {
    m.type = incoming_message::kind::response;
    m.result = *r;
    return m;
  }
  if (auto e = j.find("error"); e != j.end()) {
    m.type = incoming_message::kind::error_response;
    if (e->is_object()) {
      if (auto c = e->find("code"); c != e->end() && c->is_number_integer())
        m.error.code = c->get<int>();
      if (auto msg = e->find("message"); msg != e->end() && msg->is_string())
        m.error.message = msg->get<std::string>();
      if (auto d = e->find("data"); d != e->end()) m.error.data = *d;
    }
    return m;
  }
  return envelope_error{"a response needs a result or an error"};
}

namespace {

/// `id` as nlohmann writes it, for the envelopes below.
std::string id_text(const request_id& id) {
  if (auto* i = std::get_if<int64_t>(&id.value)) return std::to_string(*i);
  return dump_line(json(std::get<std::string>(id.value)));
}

/// An envelope's text from its parts, in one allocation of exactly its size
/// plus one: the writer appends the line's '\n', and a string that grows past
/// its capacity doubles it, which a queue of lines held for a slow reader
/// (issue 22) would pay twice over.
std::string concat(std::initializer_list<std::string_view> parts) {
  size_t size = 1;
  for (auto p : parts) size += p.size();
  std::string out;
  out.reserve(size);
  for (auto p : parts) out += p;
  return out;
}

}  // namespace

// The envelopes are written around their body's text, in nlohmann's key
// order, byte for byte what dumping `json{{"id", id}, {"result", result}}`
// writes, without copying the body into a DOM of the envelope first (for a
// thread/start reply, the whole thread).
std::string encode_response(const request_id& id, const json& result) {
  return encode_response_raw(id, dump_line(result));
}

std::string encode_response_raw(const request_id& id, std::string_view result_json) {
  return concat({"{\"id\":", id_text(id), ",\"result\":", result_json, "}"});
}

std::string encode_error(const request_id& id, int code, const std::string& message) {
  return dump_line(json{{"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

std::string encode_notification(const char* method, const json& params, int64_t emitted_at_ms) {
  return encode_notification_raw(method, dump_line(params), emitted_at_ms);
}

std::string encode_notification_raw(const char* method, const std::string& params_json,
                                    int64_t emitted_at_ms) {
  // Key order as nlohmann writes it: emittedAtMs, method, params. Method
  // names are plain ASCII constants.
  return concat({"{\"emittedAtMs\":", std::to_string(emitted_at_ms), ",\"method\":\"", method,
                 "\",\"params\":", params_json, "}"});
}

std::string encode_request(const request_id& id, const char* method, const json& params) {
  return encode_request_raw(id, method, dump_line(params));
}

std::string encode_request_raw(const request_id& id, const char* method,
                               std::string_view params_json) {
  return concat({"{\"id\":", id_text(id), ",\"method\":\"", method, "\",\"params\":",
                 params_json, "}"});
}

}  // namespace parley::protocol
