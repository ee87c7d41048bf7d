#include "protocol/errors.hpp"

#include <caf/message.hpp>
#include <caf/sec.hpp>

#include "protocol/jsonrpc.hpp"

namespace parley {

std::string to_string(errc x) {
  switch (x) {
    case errc::no_error:
      return "no_error";
    case errc::invalid_request:
      return "invalid_request";
    case errc::method_not_found:
      return "method_not_found";
    case errc::internal:
      return "internal";
    case errc::overloaded:
      return "overloaded";
    case errc::withdrawn:
      return "withdrawn";
    case errc::transport_closed:
      return "transport_closed";
    case errc::client_error:
      return "client_error";
    case errc::malformed_reply:
      return "malformed_reply";
    case errc::interrupted:
      return "interrupted";
  }
  return "unknown";
}

caf::error make_error(errc code, std::string message) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("parley"),
                    caf::make_message(std::move(message))};
}

int rpc_code_of(const caf::error& err) {
  if (err.category() != caf::atom("parley")) return protocol::rpc_code::internal_error;
  switch (static_cast<errc>(err.code())) {
    case errc::invalid_request:
      return protocol::rpc_code::invalid_request;
    case errc::method_not_found:
      return protocol::rpc_code::method_not_found;
    case errc::overloaded:
      return protocol::rpc_code::server_overloaded;
    default:
      return protocol::rpc_code::internal_error;
  }
}

std::string message_of(const caf::error& err) {
  const auto& ctx = err.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0)) return ctx.get_as<std::string>(0);
  if (err.category() == caf::atom("parley")) return to_string(static_cast<errc>(err.code()));
  if (err.category() == caf::atom("system"))
    return caf::to_string(static_cast<caf::sec>(err.code()));
  return caf::to_string(err);
}

}  // namespace parley
