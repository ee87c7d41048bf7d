#include "transport/outgoing_queue.hpp"

#include "protocol/jsonrpc.hpp"

namespace parley::ws {

bool outgoing_queue::is_notification(std::string_view line) {
  auto starts = [line](std::string_view prefix) { return line.substr(0, prefix.size()) == prefix; };
  return starts(R"({"emittedAtMs")") || starts(R"({"method")");
}

bool outgoing_queue::push(std::string frame) {
  auto limit = is_notification(frame) ? max_bytes_ : max_bytes_ + reserve();
  if (bytes_ + frame.size() > limit) return false;
  bytes_ += frame.size();
  frames_.push_back(std::move(frame));
  update_pressure();
  return true;
}

void outgoing_queue::pop() {
  bytes_ -= frames_.front().size();
  frames_.pop_front();
  update_pressure();
}

void outgoing_queue::update_pressure() {
  if (!pressing_ && bytes_ > high_water())
    pressing_ = true;
  else if (pressing_ && bytes_ < low_water())
    pressing_ = false;
}

std::optional<bool> outgoing_queue::pressure_change() {
  if (pressing_ == reported_) return std::nullopt;
  reported_ = pressing_;
  return pressing_;
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
