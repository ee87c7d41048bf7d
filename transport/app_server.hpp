#pragma once
// `parley app-server`: the runtime served over stdio JSON-RPC.

#include <string>
#include <vector>

#include "actors/core/config.hpp"

namespace parley {

/// Where the app-server serves, and who may connect (its command line).
struct listen_options {
  std::vector<std::string> listen;  // --listen values; none: stdio
  std::string ws_auth;              // "", "capability-token", "signed-bearer-token"
  std::string ws_token_file;
  std::string ws_shared_secret_file;
  /// Bytes a WebSocket client may fall behind before it is disconnected
  /// (requests get -32001 past half of it); 0: the default.
  size_t ws_max_queue = 0;
};

/// Serves the runtime where `listen` says (--listen values; none: stdio).
/// With stdio, until its input ends (or SIGINT/SIGTERM); with listeners
/// only, until a stop signal. Then it shuts down in order: pending approvals
/// resolve as cancelled, running commands are killed, active turns end
/// interrupted. Returns the exit code (2 for a bad --listen value).
int run_app_server(runtime_config config, const listen_options& listen = {});

}  // namespace parley
