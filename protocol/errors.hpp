#pragma once
// parley's error codes and the JSON-RPC code each maps to. Plain data: the
// runtime carries them as caf::error (actors/core/errors.hpp).

#include <cstdint>
#include <string>

namespace parley {

enum class errc : uint8_t {
  /// No error.
  no_error = 0,
  /// The request is malformed or not valid now (-32600, Codex's catch-all).
  invalid_request,
  /// The method does not exist (-32601).
  method_not_found,
  /// A bug or an unexpected failure inside parley (-32603).
  internal,
  /// The server is shutting down or saturated (-32001, retryable).
  overloaded,
  /// A server->client request was withdrawn before the client answered.
  withdrawn,
  /// The client's connection closed while a request was pending.
  transport_closed,
  /// The client answered a server->client request with a JSON-RPC error.
  client_error,
  /// The client's answer did not decode.
  malformed_reply,
  /// Exit reason: the turn was interrupted (turn/interrupt, shutdown).
  interrupted,
  /// The thread is unloading (idle or archived) while a request reached it
  /// (-32600: resuming it loads it again).
  unloading,
  /// Another node of the cluster holds the thread's lease (-32600; the
  /// router sends the request there instead).
  not_owner,
};

std::string to_string(errc x);

/// The JSON-RPC code for an error of parley's.
int rpc_code_of(errc code);

}  // namespace parley

