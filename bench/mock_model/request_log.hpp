#pragma once
// Every model request received, for tests to read back (GET /mock/requests), with
// credentials masked. Bounded: the oldest are dropped first.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace parley::mock_model {

struct recorded_request {
  std::uint64_t seq = 0;
  std::string method;
  std::string path;
  /// As sent, in order; credentials already masked.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

/// `Bearer sk-abc` -> `Bearer <6 chars>`: a test can see that a key was sent, and its length,
/// never the key. Other values -> `<N chars>`.
std::string mask_credential(const std::string& value);

/// True for the headers that carry credentials (Authorization, api-key, ...).
bool is_credential_header(const std::string& name);

class request_log {
 public:
  /// Keeps at most `max_requests` requests and about `max_bytes` of bodies.
  request_log(std::size_t max_requests, std::size_t max_bytes)
      : max_requests_(max_requests), max_bytes_(max_bytes) {}

  void add(recorded_request request);

  /// All kept requests, oldest first: `[{seq, method, path, headers: {name: value}, body}]`;
  /// the body is the parsed JSON when it is JSON, else the text.
  nlohmann::json all() const;
  /// The newest one, or null.
  nlohmann::json last() const;
  void clear();

 private:
  static nlohmann::json to_json(const recorded_request& r);

  std::size_t max_requests_;
  std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::deque<recorded_request> requests_;
  std::size_t bytes_ = 0;
  std::uint64_t next_seq_ = 1;
};

}  // namespace parley::mock_model
