#pragma once
// The server actor: the root of a runtime's actor tree.

#include <memory>

#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"

namespace parley {

struct server_state {
  static inline const char* name = "server";
  runtime_services svc;
  thread_manager_actor threads;
  thread_router_actor router;  // cluster only
  bool stopping = false;
};

server_actor::behavior_type server(server_actor::stateful_pointer<server_state> self,
                                   std::shared_ptr<const runtime_config> config,
                                   std::shared_ptr<process_reactor> reactor,
                                   std::shared_ptr<rules::rules_book> rules,
                                   std::shared_ptr<runtime_telemetry> telemetry,
                                   mcp_port mcp);

}  // namespace parley
