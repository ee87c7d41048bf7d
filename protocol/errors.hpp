#pragma once
// parley's error codes, carried as caf::error between actors and mapped onto
// JSON-RPC error codes at the connection.

#include <caf/error.hpp>
#include <caf/make_message.hpp>
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
};

std::string to_string(errc x);

/// The JSON-RPC code for an error produced by parley (or by CAF).
int rpc_code_of(const caf::error& err);

/// The message of the JSON-RPC error for `err`: message_of(err), except for
/// CAF's own errors, which get a message a client can act on.
std::string rpc_message_of(const caf::error& err);

/// The human-readable message an error carries (its context string), or a
/// description of it when it has none.
std::string message_of(const caf::error& err);

/// Builds an error with a message, e.g. make_error(errc::invalid_request,
/// "thread not found: x").
caf::error make_error(errc code, std::string message);

}  // namespace parley

CAF_ERROR_CODE_ENUM(parley::errc, "parley")
