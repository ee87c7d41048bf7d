#pragma once
// One JSON-RPC client connection (Codex app-server v2 framing): decodes
// lines into typed requests for the thread manager, encodes results and
// notifications, and keeps the table of server->client requests in flight.
// It is a client_actor: to the runtime it looks exactly like an in-process
// client.

#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "actors/counters.hpp"
#include "actors/interfaces.hpp"
#include "actors/services.hpp"
#include "transport/line_writer.hpp"

namespace parley {

using connection_actor = client_actor::extend<
    // One line from the client.
    caf::reacts_to<atom::line, std::string>,
    // The client's input ended.
    caf::reacts_to<atom::eof>>;

struct connection_options {
  std::shared_ptr<const runtime_config> config;
  /// stdio: the server lives as long as its one connection. When the input
  /// ends, every thread is shut down before the connection stops.
  bool shutdown_on_close = true;
};

/// A server->client request waiting for the client's answer. It remembers
/// exactly what was shown, so a reply that names another thread, turn, item
/// or action is refused.
struct outgoing_request {
  enum class kind { command, file_change, v1_exec, v1_patch };
  caf::typed_response_promise<protocol::approval_decision> promise;
  kind what = kind::command;
  uint64_t key = 0;
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  std::string digest;
  counted live{counters().pending_requests};
};

struct connection_state {
  static inline const char* name = "connection";
  connection_options options;
  thread_manager_actor threads;
  line_writer_actor out;
  bool initialized = false;
  protocol::initialize_capabilities capabilities;
  std::set<std::string> opted_out;  // notification methods this client does not want
  std::unordered_map<int64_t, std::unique_ptr<outgoing_request>> outgoing;
  std::unordered_map<uint64_t, int64_t> request_of_key;
  bool closed = false;
};

connection_actor::behavior_type connection(connection_actor::stateful_pointer<connection_state> self,
                                           thread_manager_actor threads, line_writer_actor out,
                                           connection_options options);

}  // namespace parley
