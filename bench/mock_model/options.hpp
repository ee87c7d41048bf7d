#pragma once
// The command line of parley-mock-model (mock_model.md has the table).

#include <cstddef>
#include <string>

namespace parley::mock_model {

struct options {
  int port = 0;
  std::string host = "127.0.0.1";
  /// The command of the default script's one call.
  std::string command = "true";
  /// If set, each model request body is saved as DIR/request-N.json.
  std::string dump_dir;
  /// Pause between events when the script sets none.
  long pace_ms = 0;
  /// Connections served at once (one thread each); more wait for a thread.
  std::size_t threads = 2048;
  /// If set, model requests need `Authorization: Bearer <require_key>`.
  std::string require_key;
  /// Requests kept for GET /mock/requests.
  std::size_t record = 10000;
  /// How long an idle connection is kept open; 0: every answer closes its connection.
  /// (cpp-httplib wakes each idle connection's thread about 100 times a second, so
  /// thousands of idle keep-alive connections cost the mock whole cores.)
  long keep_alive_s = 120;  // main.cpp's default_keep_alive_s
  /// The listen backlog: connections the kernel accepts before a thread takes them. A small
  /// one plays a local model server (llama.cpp's and cpp-httplib's are 5).
  int backlog = 4096;
  /// Connections past --threads wait for a thread (true) or in the kernel's backlog (false).
  bool queue_connections = true;
};

/// Reads `--name=value` or `--name value`; prints usage and exits on --help or an error.
options parse_options(int argc, char** argv);

}  // namespace parley::mock_model
