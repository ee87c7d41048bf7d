#pragma once
// `parley app-server`: the runtime served over stdio JSON-RPC.

#include <string>
#include <vector>

#include "actors/core/config.hpp"

namespace parley {

/// Serves the runtime where `listen` says (--listen values; none: stdio).
/// With stdio, until its input ends (or SIGINT/SIGTERM); with listeners
/// only, until a stop signal. Then it shuts down in order: pending approvals
/// resolve as cancelled, running commands are killed, active turns end
/// interrupted. Returns the exit code (2 for a bad --listen value).
int run_app_server(runtime_config config, const std::vector<std::string>& listen = {});

}  // namespace parley
