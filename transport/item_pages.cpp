#include "transport/item_pages.hpp"

#include <algorithm>

#include "actors/core/errors.hpp"

namespace parley::rpc {

namespace item_pages_detail {

std::string key_of(const protocol::thread_item_entry& e) {
  return e.turn_id + "/" + protocol::item_id(e.item);
}

caf::error invalid_cursor(const std::string& cursor) {
  return make_error(errc::invalid_request, "invalid cursor: " + cursor);
}

/// Where a page starts in `entries` (already in the page's order).
caf::expected<size_t> start_of(const std::vector<protocol::thread_item_entry>& entries,
                               const protocol::thread_items_list_params& params) {
  if (!params.cursor) return size_t{0};
  const auto& cursor = *params.cursor;
  auto colon = cursor.find(':');
  if (colon == std::string::npos) return invalid_cursor(cursor);
  auto kind = cursor.substr(0, colon);
  auto rest = cursor.substr(colon + 1);
  std::string key;
  if (kind == "anchor") {
    if (!params.turn_id || params.turn_id->empty())
      return make_error(errc::invalid_request, "an item anchor requires a non-empty turnId");
    key = *params.turn_id + "/" + rest;
    kind = "after";  // exclusive, in the page's direction
  } else if (kind == "after" || kind == "from") {
    key = rest;
  } else {
    return invalid_cursor(cursor);
  }
  auto i = std::find_if(entries.begin(), entries.end(),
                        [&](const auto& e) { return key_of(e) == key; });
  if (i == entries.end()) {
    if (params.cursor->rfind("anchor:", 0) == 0)
      return make_error(errc::invalid_request, "item not found: " + rest);
    return invalid_cursor(cursor);
  }
  return static_cast<size_t>(i - entries.begin()) + (kind == "after" ? 1 : 0);
}

}  // namespace item_pages_detail

caf::expected<protocol::thread_items_list_response> page_items(
    const std::vector<protocol::turn>& turns, const protocol::thread_items_list_params& params) {
  using namespace item_pages_detail;
  if (params.turn_id) {
    auto found = std::any_of(turns.begin(), turns.end(),
                             [&](const auto& t) { return t.id == *params.turn_id; });
    if (!found) return make_error(errc::invalid_request, "turn not found: " + *params.turn_id);
  }
  std::vector<protocol::thread_item_entry> entries;
  for (const auto& t : turns) {
    if (params.turn_id && t.id != *params.turn_id) continue;
    for (const auto& item : t.items) entries.push_back({t.id, item});
  }
  if (!params.ascending) std::reverse(entries.begin(), entries.end());
  auto start = start_of(entries, params);
  if (!start) return std::move(start.error());
  auto limit = params.limit && *params.limit > 0 ? *params.limit : default_item_page;
  auto end = std::min(entries.size(), *start + static_cast<size_t>(limit));
  protocol::thread_items_list_response page;
  for (auto i = *start; i < end; ++i) page.data.push_back(std::move(entries[i]));
  if (!page.data.empty()) {
    page.backwards_cursor = "from:" + key_of(page.data.front());
    if (end < entries.size()) page.next_cursor = "after:" + key_of(page.data.back());
  }
  return page;
}

}  // namespace parley::rpc
