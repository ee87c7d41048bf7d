#pragma once
// The JSON-RPC envelopes of protocol/jsonrpc.hpp around a body already
// written as JSON text (protocol/thread_text.hpp, request_text.hpp): the
// body is not parsed or copied into a DOM. Kept out of jsonrpc.hpp, which
// nearly every file includes (through notifications.hpp).

#include <string>
#include <string_view>

#include "protocol/jsonrpc.hpp"

namespace parley::protocol {

/// encode_response with its result as JSON text.
std::string encode_response_raw(const request_id& id, std::string_view result_json);
/// encode_request with its params as JSON text.
std::string encode_request_raw(const request_id& id, const char* method,
                               std::string_view params_json);

}  // namespace parley::protocol
