#include "protocol/errors.hpp"

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
    case errc::unloading:
      return "unloading";
    case errc::not_owner:
      return "not_owner";
  }
  return "unknown";
}

int rpc_code_of(errc code) {
  switch (code) {
    case errc::invalid_request:
    case errc::unloading:
    case errc::not_owner:
      return protocol::rpc_code::invalid_request;
    case errc::method_not_found:
      return protocol::rpc_code::method_not_found;
    case errc::overloaded:
      return protocol::rpc_code::server_overloaded;
    default:
      return protocol::rpc_code::internal_error;
  }
}

}  // namespace parley
