#pragma once
// item/agentMessage/delta's params for the deltas of one streaming message,
// with the part every delta of it shares (its item, thread and turn ids)
// escaped once. A message streams hundreds of deltas of a few bytes each,
// and escaping its three ids again for each was most of the work of
// writing one (issue 23). The text is byte for byte params_text's
// (protocol/notification_text.hpp): keys in nlohmann's order, its escapes.

#include <optional>
#include <string>
#include <string_view>

namespace parley::protocol {

class message_delta_text {
 public:
  message_delta_text() = default;
  message_delta_text(std::string_view thread_id, std::string_view turn_id,
                     std::string_view item_id);

  /// `params` of agent_message_delta{thread_id, turn_id, item_id, delta},
  /// or nullopt when this writer cannot write it (an id or the delta is not
  /// valid UTF-8, or no ids were given): then params_text writes it.
  std::optional<std::string> params(std::string_view delta) const;

 private:
  std::string ids_;  // ,"itemId":...,"threadId":...,"turnId":...}; empty: not written here
};

}  // namespace parley::protocol
