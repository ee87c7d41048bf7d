#pragma once
// `parley app-server`: the runtime served over stdio JSON-RPC.

#include <string>

#include "actors/core/config.hpp"

namespace parley {

/// Serves one client on stdin/stdout until the input ends (or SIGINT/SIGTERM),
/// then shuts down in order: pending approvals resolve as cancelled, running
/// commands are killed, active turns end interrupted. Returns the exit code.
int run_app_server(runtime_config config);

}  // namespace parley
