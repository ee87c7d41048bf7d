#pragma once
// thread/turns/list as a pure function of a thread's turns: pages in either
// direction, with cursors that name a turn (so they stay valid while the
// thread grows), and the item detail asked for.
//
// A cursor is opaque to clients: "after:<turnId>" continues past that turn,
// "from:<turnId>" starts at it (the backwards cursor: reversing the
// direction shows the anchor turn again, as Codex documents).

#include <caf/expected.hpp>
#include <vector>

#include "protocol/methods.hpp"

namespace parley::rpc {

/// Turns per page when the client gives no limit.
inline constexpr uint32_t default_turn_page = 25;

caf::expected<protocol::thread_turns_list_response> page_turns(
    std::vector<protocol::turn> turns, const protocol::thread_turns_list_params& params);

}  // namespace parley::rpc
