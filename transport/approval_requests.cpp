#include "transport/approval_requests.hpp"

#include <utility>

#include "actors/core/errors.hpp"
#include "protocol/client_requests.hpp"
#include "protocol/request_text.hpp"

namespace parley::rpc {

using protocol::json;

namespace {

approval_request file_change_request(const approval_ask& ask, bool legacy) {
  approval_request r;
  if (legacy) {
    r.binding.what = approval_binding::kind::v1_patch;
    protocol::apply_patch_approval_params p;
    p.conversation_id = ask.thread_id;
    p.call_id = ask.item_id();
    p.file_changes = ask.changes;
    p.reason = ask.file.reason;
    p.grant_root = ask.file.grant_root;
    r.method = protocol::apply_patch_approval_method;
    r.params = json(p);
    return r;
  }
  r.binding.what = approval_binding::kind::file_change;
  r.method = protocol::file_change_approval_method;
  r.params = json(ask.file);
  r.params["actionDigest"] = ask.digest;
  return r;
}

approval_request command_request(const approval_ask& ask, bool legacy) {
  approval_request r;
  if (legacy) {
    r.binding.what = approval_binding::kind::v1_exec;
    protocol::exec_command_approval_params p;
    p.conversation_id = ask.thread_id;
    p.call_id = ask.item_id();
    p.command = {"/bin/sh", "-c", ask.raw_command};
    p.cwd = ask.cwd;
    p.reason = ask.command.reason;
    p.parsed_cmd = ask.command.command_actions;
    r.method = protocol::exec_command_approval_method;
    r.params = json(p);
    return r;
  }
  r.binding.what = approval_binding::kind::command;
  r.method = protocol::command_approval_method;
  r.params_text.reserve(512);
  if (protocol::append_command_approval(r.params_text, ask.command, ask.digest)) return r;
  r.params_text.clear();  // a string that is not valid UTF-8: nlohmann's
  r.params = json(ask.command);
  r.params["actionDigest"] = ask.digest;
  return r;
}

/// A question, a client tool's call or a permission request: the same for
/// every client (v1 has none of them).
approval_request client_request_for(const approval_ask& ask) {
  approval_request r;
  r.params = ask.request_params;
  switch (ask.request) {
    case client_request::user_input:
      r.binding.what = approval_binding::kind::user_input;
      r.method = protocol::user_input_request_method;
      r.binding.questions = ask.request_params.value("questions", protocol::json::array());
      break;
    case client_request::dynamic_tool:
      r.binding.what = approval_binding::kind::dynamic_tool;
      r.method = protocol::dynamic_tool_call_method;
      break;
    case client_request::elicitation:
      r.binding.what = approval_binding::kind::elicitation;
      r.method = protocol::mcp_elicitation_method;
      break;
    case client_request::mcp_approval:
      r.binding.what = approval_binding::kind::mcp_approval;
      r.method = protocol::mcp_elicitation_method;
      break;
    case client_request::permissions:
    case client_request::none:
      r.binding.what = approval_binding::kind::permissions;
      r.method = protocol::permissions_approval_method;
      break;
  }
  return r;
}

}  // namespace

approval_request approval_request_for(const approval_ask& ask, bool legacy) {
  auto r = ask.is_client_request()  ? client_request_for(ask)
           : ask.is_file_change() ? file_change_request(ask, legacy)
                                  : command_request(ask, legacy);
  r.binding.thread_id = ask.thread_id;
  r.binding.turn_id = ask.turn_id();
  r.binding.item_id = ask.item_id();
  r.binding.digest = ask.digest;
  return r;
}

std::optional<std::string> binding_mismatch(const approval_binding& b, const json& result) {
  if (!result.is_object()) return std::nullopt;
  auto check = [&](const char* field, const std::string& expected) -> std::optional<std::string> {
    auto i = result.find(field);
    if (i == result.end() || i->is_null()) return std::nullopt;
    if (i->is_string() && i->get_ref<const std::string&>() == expected) return std::nullopt;
    return std::string{field} + " " + i->dump() + " is not " + expected;
  };
  for (auto [field, expected] : {std::pair<const char*, const std::string*>{"threadId", &b.thread_id},
                                 {"turnId", &b.turn_id},
                                 {"itemId", &b.item_id},
                                 {"actionDigest", &b.digest}})
    if (auto m = check(field, *expected)) return m;
  return std::nullopt;
}

namespace {

/// A request that is no approval, answered: its checked result.
protocol::approval_decision answered(protocol::json answer) {
  auto d = protocol::approval_decision::accept();
  d.answer = std::move(answer);
  return d;
}

}  // namespace

caf::expected<protocol::approval_decision> decode_decision(const approval_binding& b,
                                                           const json& result) {
  try {
    switch (b.what) {
      case approval_binding::kind::command:
        return protocol::decode_approval_result(result);
      case approval_binding::kind::file_change:
        return protocol::decode_file_change_result(result);
      case approval_binding::kind::v1_exec:
      case approval_binding::kind::v1_patch:
        return protocol::decode_review_decision_result(result);
      case approval_binding::kind::user_input:
        return answered(protocol::decode_user_input_answer(result, b.questions));
      case approval_binding::kind::dynamic_tool:
        return answered(protocol::decode_dynamic_tool_answer(result));
      case approval_binding::kind::permissions:
        return answered(protocol::decode_permissions_answer(result));
      case approval_binding::kind::elicitation:
        return answered(protocol::decode_elicitation_answer(result));
      case approval_binding::kind::mcp_approval: {
        // An MCP tool call's approval: only `accept` may run it; `decline`
        // and `cancel` are decisions that run nothing (stored and audited
        // so). The turn reads the answer's scope (protocol/mcp_tool_approval).
        auto answer = protocol::decode_elicitation_answer(result);
        auto action = answer.value("action", "");
        auto d = action == "accept"    ? protocol::approval_decision::accept()
                 : action == "decline" ? protocol::approval_decision::decline()
                                       : protocol::approval_decision::cancel();
        d.answer = std::move(answer);
        return d;
      }
    }
    return protocol::decode_approval_result(result);
  } catch (const protocol::decode_error& e) {
    if (b.is_v1()) return protocol::approval_decision::decline();
    return make_error(errc::malformed_reply, e.what());
  }
}

caf::expected<protocol::approval_decision> decision_of_error_reply(const approval_binding& b,
                                                                   const std::string& message) {
  if (b.is_v1()) return protocol::approval_decision::decline();
  return make_error(errc::client_error, message);
}

}  // namespace parley::rpc
