#include "actors/core/counters.hpp"
#include "actors/core/messages.hpp"

namespace parley {

const char* to_string(approval_outcome::kind x) {
  switch (x) {
    case approval_outcome::kind::decided:
      return "decided";
    case approval_outcome::kind::client_error:
      return "client_error";
    case approval_outcome::kind::malformed:
      return "malformed";
    case approval_outcome::kind::timed_out:
      return "timed_out";
    case approval_outcome::kind::transport_closed:
      return "transport_closed";
    case approval_outcome::kind::cancelled:
      return "cancelled";
  }
  return "cancelled";
}

const char* to_string(client_request x) {
  switch (x) {
    case client_request::none:
      return "approval";
    case client_request::user_input:
      return "userInput";
    case client_request::dynamic_tool:
      return "dynamicTool";
    case client_request::permissions:
      return "permissions";
    case client_request::elicitation:
      return "mcpElicitation";
    case client_request::mcp_approval:
      return "mcpToolApproval";
  }
  return "approval";
}

}  // namespace parley
