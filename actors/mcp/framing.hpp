#pragma once
// MCP's stdio framing and the JSON-RPC 2.0 messages parley exchanges with an
// MCP server: one JSON object per line, no embedded newlines. Pure (no CAF,
// no logging), so a hostile server's bytes are judged by code the unit tests
// reach directly.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::mcp {

using json = nlohmann::json;

/// A line longer than this cuts the server off: no MCP message parley
/// needs is anywhere near it, and buffering without a bound would let a
/// server take parley's memory.
constexpr size_t max_line_bytes = size_t{16} << 20;

/// The revision parley asks for in `initialize`.
constexpr const char* requested_protocol_version = "2025-06-18";

/// Whether parley speaks the revision a server answered with (MCP's
/// published revisions since 2024-11-05).
bool supported_protocol_version(const std::string& version);

/// `initialize`'s params: the revision, the client capabilities (form-mode
/// elicitation; no roots, no sampling), and who parley is.
json initialize_params(const std::string& client_version);

std::string request_line(int64_t id, const std::string& method, const json& params);
std::string notification_line(const std::string& method, const json& params);
std::string result_line(const json& id, const json& result);
std::string error_line(const json& id, int code, const std::string& message);

/// One message from a server.
struct incoming {
  enum class kind { response, error_response, request, notification };
  kind what = kind::notification;
  /// Requests and responses; parley's own requests have integer ids.
  json id;
  std::string method;
  json params;
  json result;
  int error_code = 0;
  std::string error_message;
  /// A response's line as it came (set by the server's actor): a model's
  /// call reads its result from it in the server's key order.
  std::string line;
};

/// A line is either a message or a reason it is not JSON-RPC 2.0.
struct parsed_line {
  std::optional<incoming> message;
  std::string problem;
};

/// Judges one line (without its newline). A blank line is neither: no
/// message and no problem.
parsed_line parse_line(std::string_view line);

/// Cuts a byte stream into lines, holding at most `limit` bytes of a line
/// not yet ended.
class line_splitter {
 public:
  explicit line_splitter(size_t limit = max_line_bytes) : limit_(limit) {}
  /// Appends the complete lines in `data` to `out` (without "\n" or a
  /// trailing "\r"); false once a line grew past the limit (the splitter
  /// then takes nothing more).
  bool feed(std::string_view data, std::vector<std::string>& out);
  bool overflowed() const { return overflowed_; }

 private:
  size_t limit_;
  std::string partial_;
  bool overflowed_ = false;
};

}  // namespace parley::mcp
