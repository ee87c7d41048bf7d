#pragma once
// How an approval ask is shown to a client (a v2 request, or v1 for legacy
// clients), what it is bound to, and how the client's answer is read. Pure
// functions: the RPC session keeps the table, this decides the shapes.

#include <caf/expected.hpp>
#include <optional>
#include <string>

#include "actors/core/messages.hpp"
#include "protocol/approvals.hpp"

namespace parley::rpc {

/// What a server->client request was about, so an answer that names another
/// thread, turn, item or action is refused.
struct approval_binding {
  enum class kind {
    command, file_change, v1_exec, v1_patch, user_input, dynamic_tool, permissions, elicitation,
    mcp_approval
  };
  kind what = kind::command;
  std::string thread_id;
  std::string turn_id;
  std::string item_id;
  std::string digest;
  /// user_input: the questions asked (an answer may name only those).
  protocol::json questions;

  bool is_v1() const { return what == kind::v1_exec || what == kind::v1_patch; }
};

/// A server->client request ready to send.
struct approval_request {
  const char* method = nullptr;
  protocol::json params;  // null when params_text holds them
  /// The params already written as JSON text (the v2 command request, the
  /// one every escalated command asks: issue 23); empty: `params` holds them.
  std::string params_text;
  approval_binding binding;
};

/// The request a client sees for an ask: v2, or v1 when `legacy`.
approval_request approval_request_for(const approval_ask& ask, bool legacy);

/// A client may echo what its decision is about (`threadId`, `turnId`,
/// `itemId`, `actionDigest`) in the result; a mismatch means the decision
/// was made for something else. Returns the first mismatch, if any.
std::optional<std::string> binding_mismatch(const approval_binding& b, const protocol::json& result);

/// Decodes the client's decision for the kind of request it answers. A v1
/// client's unreadable answer is a denial (v1's rule); a v2 one is an error
/// (malformed_reply), which fails closed too.
caf::expected<protocol::approval_decision> decode_decision(const approval_binding& b,
                                                           const protocol::json& result);

/// The client answered with a JSON-RPC error: v1 reads it as a denial, v2 as
/// client_error.
caf::expected<protocol::approval_decision> decision_of_error_reply(const approval_binding& b,
                                                                   const std::string& message);

}  // namespace parley::rpc
