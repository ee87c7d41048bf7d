#pragma once
// thread/items/list as a pure function of a thread's turns: the items of
// every turn (or of one), oldest first unless asked otherwise, in pages.
//
// A cursor is opaque to clients: "after:<turnId>/<itemId>" continues past
// that item, "from:<turnId>/<itemId>" starts at it (the backwards cursor, as
// thread/turns/list's). An item anchor ({"type":"item","itemId"}) needs the
// turn it is in (`turnId`) and is exclusive: the items after it ascending,
// before it descending.

#include <caf/expected.hpp>
#include <vector>

#include "protocol/thread_extras.hpp"
#include "protocol/types.hpp"

namespace parley::rpc {

/// Items per page when the client gives no limit (or 0).
inline constexpr uint32_t default_item_page = 100;

caf::expected<protocol::thread_items_list_response> page_items(
    const std::vector<protocol::turn>& turns, const protocol::thread_items_list_params& params);

}  // namespace parley::rpc
