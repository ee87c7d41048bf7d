#pragma once
// parley's errors as the runtime carries them between actors (caf::error),
// and how any caf::error, CAF's own included, becomes a JSON-RPC error a
// client can act on.

#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <string>

#include "protocol/errors.hpp"

namespace parley {

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

/// Whether `err` is parley's `code` (whatever its message).
bool is_errc(const caf::error& err, errc code);

}  // namespace parley

CAF_ERROR_CODE_ENUM(parley::errc, "parley")
