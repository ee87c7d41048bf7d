#pragma once
// What every conversation and turn of one runtime shares.

#include <atomic>
#include <caf/actor.hpp>
#include <functional>
#include <memory>

#include "actors/core/config.hpp"
#include "actors/core/interfaces.hpp"
#include "actors/core/telemetry.hpp"
#include "protocol/notification_text.hpp"

namespace parley {

// Shared by handle only: the components that use them include their headers.
class process_reactor;  // actors/threads/process_reactor.hpp
namespace rules {
class rules_book;  // actors/approval/rules_book.hpp
}

/// The MCP hub as a turn reaches it (issue 30; untyped: actors/mcp is not
/// a dependency of the turn). Messages, JSON as text:
///   (atom::mcp_tools, uint64_t known) -> (uint64_t generation, std::string tools):
///       the tools offered to models, a JSON array of {name, server, tool,
///       deadlineMs, annotations, title, description, approvalMode, function}
///       (function: the Responses function tool); ""
///       when `known` is the generation already;
///   (atom::mcp_call, "mcpToolCall", params) -> CallToolResult as text: a
///       model's call ({server, tool, arguments, progressToken}); the
///       caller hears (atom::mcp_progress, token, message) meanwhile;
///   (atom::mcp_cancel, server, token): the caller gave the call up (the
///       server is sent notifications/cancelled; a late answer is dropped).
struct mcp_port {
  caf::actor hub;  // invalid: no MCP at all
  /// Bumped by the hub whenever the tools it offers change: a turn asks
  /// only when it differs from what it has (0: no tools ever).
  std::shared_ptr<const std::atomic<uint64_t>> tools_generation;
};

struct runtime_services {
  std::shared_ptr<const runtime_config> config;
  store_actor store;
  model_actor model;
  /// A model of its own for each turn (a streaming endpoint: the actor holds
  /// the turn's request in flight and watches the turn); empty: every turn
  /// asks the shared `model`.
  std::function<model_actor(caf::actor_system&, const turn_actor&)> model_for_turn;
  /// The turns' models keep their context verbatim (their steps carry it):
  /// a thread's items are then stored without the response items they
  /// would stand for.
  bool model_keeps_context = false;
  std::shared_ptr<process_reactor> reactor;
  audit_actor audit;                             // invalid when auditing is off
  std::shared_ptr<rules::rules_book> rules;      // null when there is no rules directory
  rules_actor rules_keeper;                      // writes amendments; invalid without rules
  std::shared_ptr<runtime_telemetry> telemetry;  // this runtime's counts, stats and keys
  mcp_port mcp;
};

/// The error for a request that would start something the store cannot
/// keep now (a full or read-only disk): -32001, naming the cause; none
/// while the store writes.
caf::error store_refusal(const runtime_services& svc);
/// The error for a new turn while the server drains (a stop signal came):
/// -32001, retryable elsewhere or after the restart; none otherwise.
caf::error drain_refusal(const runtime_services& svc);

/// A notification made by one of this runtime's actors (encoded ahead when
/// the runtime serves JSON clients). Its params are written by
/// protocol::params_text, which writes the hottest shapes (deltas, status
/// changes) without an nlohmann DOM, byte for byte as nlohmann would.
template <class T>
notification_ptr make_event(const runtime_services& svc, T&& x,
                            std::shared_ptr<const void> credit = {}) {
  auto e = std::make_shared<outgoing_event>();
  e->credit = std::move(credit);
  e->body = std::forward<T>(x);
  if (svc.config->encode_events) e->wire_params = protocol::params_text(e->body);
  return e;
}

}  // namespace parley
