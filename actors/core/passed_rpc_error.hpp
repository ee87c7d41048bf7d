#pragma once
// A JSON-RPC error another peer answered (an MCP server's answer to a
// tools/call), carried as a caf::error to whoever asked, unchanged: the
// transport answers a client's mcpServer/tool/call with the server's code,
// message and data (as Codex 0.169 passes them, e.g. -32042 "URL
// elicitation required" with the elicitations the user must open), and a
// turn tells the item and the model all three. Header-only: the transport
// and the actors read it without a library of their own.

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace parley {

/// The error as the peer answered it.
struct passed_rpc_error {
  int code = 0;
  std::string message;
  std::string data;  // its `data` as JSON text in the peer's key order; empty: none
};

/// Its category: not parley's own, so a path that does not look for it
/// answers -32603 (rpc_code_of) with the summary (message_of).
inline caf::atom_value passed_rpc_error_category() { return caf::atom("peer_rpc"); }

/// `summary` is what logs and message_of() show.
inline caf::error make_passed_rpc_error(std::string summary, const passed_rpc_error& e) {
  return caf::error{uint8_t{1}, passed_rpc_error_category(),
                    caf::make_message(std::move(summary), int32_t{e.code}, e.message, e.data)};
}

/// The peer's error `err` carries, if it is one.
inline std::optional<passed_rpc_error> passed_rpc_error_of(const caf::error& err) {
  // An empty error has no category to ask for (CAF 0.17 dereferences it).
  if (!err || err.category() != passed_rpc_error_category()) return std::nullopt;
  const auto& ctx = err.context();
  if (!ctx.match_elements<std::string, int32_t, std::string, std::string>()) return std::nullopt;
  return passed_rpc_error{ctx.get_as<int32_t>(1), ctx.get_as<std::string>(2),
                          ctx.get_as<std::string>(3)};
}

}  // namespace parley
