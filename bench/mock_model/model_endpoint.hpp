#pragma once
// POST /v1/responses and /v1/chat/completions: read the turn and its script from the
// request, pick the fault that hits this attempt, and answer (an HTTP error or a stream).

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <string>

#include "bench/mock_model/faults.hpp"

namespace parley::mock_model {

enum class wire_api { responses, chat };

class model_endpoint {
 public:
  model_endpoint(std::string command, std::string dump_dir, long pace_ms)
      : command_(std::move(command)), dump_dir_(std::move(dump_dir)), pace_ms_(pace_ms) {}

  void handle(wire_api api, const httplib::Request& req, httplib::Response& res);

 private:
  void dump(const nlohmann::json& body);

  std::string command_;
  std::string dump_dir_;
  long pace_ms_;
  fault_counter faults_;
  std::atomic<unsigned> dumped_{0};
};

/// A JSON error body as OpenAI sends them, on `res` with `status`.
void error_response(httplib::Response& res, int status, const std::string& message,
                    const std::string& type);

/// One line on stderr, whole (one fwrite, so lines of server threads never interleave).
void log_line(const std::string& line);

}  // namespace parley::mock_model
