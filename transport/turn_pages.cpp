#include "transport/turn_pages.hpp"

#include <algorithm>

#include "actors/core/errors.hpp"

namespace parley::rpc {

namespace {

/// Where a page starts in `turns` (already in the page's order).
caf::expected<size_t> start_of(const std::vector<protocol::turn>& turns,
                               const std::optional<std::string>& cursor) {
  if (!cursor) return size_t{0};
  auto colon = cursor->find(':');
  auto kind = cursor->substr(0, colon);
  if (colon == std::string::npos || (kind != "after" && kind != "from"))
    return make_error(errc::invalid_request, "invalid cursor: " + *cursor);
  auto id = cursor->substr(colon + 1);
  auto i = std::find_if(turns.begin(), turns.end(), [&](const auto& t) { return t.id == id; });
  if (i == turns.end()) return make_error(errc::invalid_request, "invalid cursor: " + *cursor);
  return static_cast<size_t>(i - turns.begin()) + (kind == "after" ? 1 : 0);
}

/// The items a page shows of a turn: none, the user's messages and the last
/// agent message, or everything.
void apply_view(protocol::turn& t, const std::string& view) {
  t.items_view = view;
  if (view == "full") return;
  std::vector<protocol::thread_item> kept;
  if (view == "summary") {
    const protocol::thread_item* last_answer = nullptr;
    for (const auto& item : t.items) {
      if (std::holds_alternative<protocol::user_message_item>(item)) kept.push_back(item);
      if (std::holds_alternative<protocol::agent_message_item>(item)) last_answer = &item;
    }
    if (last_answer) kept.push_back(*last_answer);
  }
  t.items = std::move(kept);
}

}  // namespace

caf::expected<protocol::thread_turns_list_response> page_turns(
    std::vector<protocol::turn> turns, const protocol::thread_turns_list_params& params) {
  if (!params.ascending) std::reverse(turns.begin(), turns.end());  // newest first
  auto start = start_of(turns, params.cursor);
  if (!start) return std::move(start.error());
  auto limit = static_cast<size_t>(params.limit.value_or(default_turn_page));
  auto end = std::min(turns.size(), *start + limit);
  protocol::thread_turns_list_response page;
  for (auto i = *start; i < end; ++i) {
    page.data.push_back(std::move(turns[i]));
    apply_view(page.data.back(), params.items_view);
  }
  if (!page.data.empty()) {
    page.backwards_cursor = "from:" + page.data.front().id;
    if (end < turns.size()) page.next_cursor = "after:" + page.data.back().id;
  }
  return page;
}

}  // namespace parley::rpc
