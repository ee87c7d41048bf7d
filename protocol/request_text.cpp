#include "protocol/request_text.hpp"

#include "protocol/item_text.hpp"
#include "protocol/notification_text.hpp"

namespace parley::protocol {

bool append_command_approval(std::string& out, const command_approval_params& x,
                             const std::string& action_digest) {
  append_key(out += '{', "actionDigest");
  if (!append_json_string(out, action_digest)) return false;
  out += R"(,"approvalId":null)";
  append_key(out += ',', "command");
  if (!append_string_or_null(out, x.command)) return false;
  append_key(out += ',', "commandActions");
  if (!append_command_actions(out, x.command_actions)) return false;
  append_key(out += ',', "cwd");
  if (!append_string_or_null(out, x.cwd)) return false;
  append_key(out += ',', "itemId");
  if (!append_json_string(out, x.item_id)) return false;
  out += R"(,"kind":"command")";
  if (!x.proposed_execpolicy_amendment.empty()) {
    append_key(out += ',', "proposedExecpolicyAmendment");
    if (!append_string_array(out, x.proposed_execpolicy_amendment)) return false;
  }
  append_key(out += ',', "reason");
  if (!append_string_or_null(out, x.reason)) return false;
  append_key(out += ',', "startedAtMs");
  out += std::to_string(x.started_at_ms);
  append_key(out += ',', "threadId");
  if (!append_json_string(out, x.thread_id)) return false;
  append_key(out += ',', "turnId");
  if (!append_json_string(out, x.turn_id)) return false;
  out += '}';
  return true;
}

}  // namespace parley::protocol
