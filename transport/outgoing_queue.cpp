#include "transport/outgoing_queue.hpp"

#include "protocol/jsonrpc.hpp"

namespace parley::ws {

bool outgoing_queue::push(std::string frame) {
  if (bytes_ + frame.size() > max_bytes_) return false;
  bytes_ += frame.size();
  frames_.push_back(std::move(frame));
  return true;
}

void outgoing_queue::pop() {
  bytes_ -= frames_.front().size();
  frames_.pop_front();
}

std::optional<std::string> outgoing_queue::refusal(const std::string& incoming) const {
  if (!overloaded()) return std::nullopt;
  auto parsed = protocol::parse_message(incoming);
  auto* m = std::get_if<protocol::incoming_message>(&parsed);
  if (!m || m->type != protocol::incoming_message::kind::request) return std::nullopt;
  return protocol::encode_error(m->id, protocol::rpc_code::server_overloaded,
                                "Server overloaded; retry later.");
}

}  // namespace parley::ws
