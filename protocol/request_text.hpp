#pragma once
// The params of the server->client request every escalated command asks
// (item/commandExecution/requestApproval) as JSON text, written straight
// into a string without an nlohmann DOM (issue 23). Byte for byte what
// nlohmann writes for its to_json with the request's actionDigest added
// (keys in its order, the same escapes); false, with `out` partly written,
// for a string that is not valid UTF-8: the caller then lets nlohmann
// write it.

#include <string>

#include "protocol/approvals.hpp"

namespace parley::protocol {

bool append_command_approval(std::string& out, const command_approval_params& x,
                             const std::string& action_digest);

}  // namespace parley::protocol
