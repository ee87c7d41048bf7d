#include "actors/core/errors.hpp"

#include <caf/message.hpp>
#include <caf/sec.hpp>

#include "protocol/jsonrpc.hpp"

namespace parley {

caf::error make_error(errc code, std::string message) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("parley"),
                    caf::make_message(std::move(message))};
}

namespace {

/// CAF's own failures, as a client can act on them: a request that reached
/// an actor which was going away (a thread that unloaded meanwhile) or that
/// timed out inside the server. Any other is a bug (-32603).
int rpc_code_of_system(caf::sec code) {
  switch (code) {
    case caf::sec::request_receiver_down:
      return protocol::rpc_code::invalid_request;
    case caf::sec::request_timeout:
      return protocol::rpc_code::server_overloaded;
    default:
      return protocol::rpc_code::internal_error;
  }
}

std::string message_of_system(caf::sec code) {
  switch (code) {
    case caf::sec::request_receiver_down:
      return "thread not loaded: it unloaded while this request was on its way; resume it and "
             "retry";
    case caf::sec::request_timeout:
      return "the server did not finish this request in time; retry later";
    default:
      return "Internal error: " + caf::to_string(code);
  }
}

}  // namespace

int rpc_code_of(const caf::error& err) {
  if (err.category() == caf::atom("system"))
    return rpc_code_of_system(static_cast<caf::sec>(err.code()));
  if (err.category() != caf::atom("parley")) return protocol::rpc_code::internal_error;
  return rpc_code_of(static_cast<errc>(err.code()));
}

std::string rpc_message_of(const caf::error& err) {
  // CAF's names for its own errors are internals a client cannot act on.
  if (err.category() == caf::atom("system"))
    return message_of_system(static_cast<caf::sec>(err.code()));
  return message_of(err);
}

std::string message_of(const caf::error& err) {
  const auto& ctx = err.context();
  // The first string is the message (a peer's passed error carries its
  // JSON after it: actors/core/passed_rpc_error.hpp).
  if (ctx.size() >= 1 && ctx.match_element<std::string>(0)) return ctx.get_as<std::string>(0);
  if (err.category() == caf::atom("parley")) return to_string(static_cast<errc>(err.code()));
  if (err.category() == caf::atom("system"))
    return caf::to_string(static_cast<caf::sec>(err.code()));
  return caf::to_string(err);
}

bool is_errc(const caf::error& err, errc code) {
  // An empty error has no category to ask for (CAF 0.17 dereferences it).
  return err && err.category() == caf::atom("parley") && static_cast<errc>(err.code()) == code;
}

}  // namespace parley
