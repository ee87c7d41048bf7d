#pragma once
// The JSON-RPC envelope as the Codex app-server frames it: one JSON object
// per line, no "jsonrpc" key sent, ids echoed with their JSON type.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "protocol/json_codec.hpp"

namespace parley::protocol {

/// A JSON-RPC id: a string or a 64-bit integer, echoed back with its type.
struct request_id {
  std::variant<int64_t, std::string> value;

  request_id() : value(int64_t{0}) {}
  request_id(int64_t x) : value(x) {}  // NOLINT: ids are written as literals in tests
  request_id(std::string x) : value(std::move(x)) {}

  std::string to_string() const;
  friend bool operator==(const request_id& a, const request_id& b) { return a.value == b.value; }
  friend bool operator!=(const request_id& a, const request_id& b) { return !(a == b); }
  friend bool operator<(const request_id& a, const request_id& b) { return a.value < b.value; }
};
void to_json(json& j, const request_id& x);
void from_json(const json& j, request_id& x);

/// JSON-RPC error codes used by the Codex app-server (error_code.rs).
namespace rpc_code {
constexpr int invalid_request = -32600;
constexpr int method_not_found = -32601;
constexpr int invalid_params = -32602;
constexpr int internal_error = -32603;
constexpr int server_overloaded = -32001;
}  // namespace rpc_code

struct rpc_error {
  int code = rpc_code::internal_error;
  std::string message;
  json data;  // null when absent
};

/// One decoded line from the peer.
struct incoming_message {
  enum class kind { request, notification, response, error_response };
  kind type = kind::request;
  request_id id;        // request, response, error_response
  std::string method;   // request, notification
  json params;          // request, notification
  bool has_params = false;
  json result;          // response
  rpc_error error;      // error_response
  /// A request whose envelope is fine but whose content is refused (nested
  /// deeper than max_json_depth): it is answered with this error, params
  /// are dropped. Deep responses arrive as error_response, deep
  /// notifications as envelope_error.
  std::optional<rpc_error> rejected;
};

/// Why a line is not a message. Such lines are logged and get no reply.
struct envelope_error {
  std::string reason;
};

std::variant<incoming_message, envelope_error> parse_message(std::string_view line);

// -- encoding --------------------------------------------------------------------

std::string encode_response(const request_id& id, const json& result);
std::string encode_error(const request_id& id, int code, const std::string& message);
std::string encode_notification(const char* method, const json& params, int64_t emitted_at_ms);
/// The same with params already encoded as JSON text.
std::string encode_notification_raw(const char* method, const std::string& params_json,
                                    int64_t emitted_at_ms);
std::string encode_request(const request_id& id, const char* method, const json& params);

}  // namespace parley::protocol
