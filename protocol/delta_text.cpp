#include "protocol/delta_text.hpp"

#include "protocol/notification_text.hpp"

namespace parley::protocol {

message_delta_text::message_delta_text(std::string_view thread_id, std::string_view turn_id,
                                       std::string_view item_id) {
  std::string ids;
  ids += ',';
  append_key(ids, "itemId");
  if (!append_json_string(ids, item_id)) return;
  ids += ',';
  append_key(ids, "threadId");
  if (!append_json_string(ids, thread_id)) return;
  ids += ',';
  append_key(ids, "turnId");
  if (!append_json_string(ids, turn_id)) return;
  ids += '}';
  ids_ = std::move(ids);
}

std::optional<std::string> message_delta_text::params(std::string_view delta) const {
  if (ids_.empty()) return std::nullopt;
  std::string out;
  // Escapes may make the delta longer; most deltas have none.
  out.reserve(sizeof("{\"delta\":\"\"") + delta.size() + ids_.size());
  out += "{\"delta\":";
  if (!append_json_string(out, delta)) return std::nullopt;
  out += ids_;
  return out;
}

}  // namespace parley::protocol
