#pragma once
// The thread methods beyond reading and running one: thread/items/list,
// thread/goal/*, thread/metadata/update, thread/revert and
// thread/inject_items (Codex 0.169's v2 shapes).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/items.hpp"
#include "protocol/json_codec.hpp"
#include "protocol/types.hpp"

namespace parley::protocol {

// -- thread/items/list -------------------------------------------------------

struct thread_items_list_params {
  std::string thread_id;
  std::optional<std::string> turn_id;  // only this turn's items
  /// A string from an earlier page, or an item anchor (`{"type":"item",
  /// "itemId"}`, exclusive, within `turn_id`), kept as "anchor:<itemId>".
  std::optional<std::string> cursor;
  std::optional<uint32_t> limit;
  bool ascending = true;  // sortDirection: "asc" (the default) or "desc"
};
void from_json(const json& j, thread_items_list_params& x);

struct thread_item_entry {
  std::string turn_id;
  thread_item item;
};
void to_json(json& j, const thread_item_entry& x);

struct thread_items_list_response {
  std::vector<thread_item_entry> data;
  std::optional<std::string> next_cursor;
  std::optional<std::string> backwards_cursor;
};
void to_json(json& j, const thread_items_list_response& x);

// -- thread/goal/* -----------------------------------------------------------

/// A thread's goal: what it works toward, its status and its budget.
struct thread_goal {
  std::string thread_id;
  std::string objective;
  std::string status = "active";  // ThreadGoalStatus
  std::optional<int64_t> token_budget;
  int64_t tokens_used = 0;
  int64_t time_used_seconds = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};
void to_json(json& j, const thread_goal& x);
void from_json(const json& j, thread_goal& x);

/// Whether `s` is one of ThreadGoalStatus's values.
bool is_goal_status(const std::string& s);

struct thread_goal_set_params {
  std::string thread_id;
  std::optional<std::string> objective;
  std::optional<std::string> status;
  std::optional<int64_t> token_budget;
  bool token_budget_given = false;  // present (a null clears the budget)
};
void from_json(const json& j, thread_goal_set_params& x);

// -- thread/metadata/update ---------------------------------------------------

/// One field of a patch: left as it is (not given), cleared (given, null) or
/// replaced (given, a value).
struct field_patch {
  bool given = false;
  std::optional<std::string> value;
};

struct git_info_patch {
  field_patch sha, branch, origin_url;
};

struct thread_metadata_update_params {
  std::string thread_id;
  std::optional<git_info_patch> git;  // absent or null: nothing to update
};
void from_json(const json& j, thread_metadata_update_params& x);

/// Codex's checks of an update before it looks for the thread: something
/// to change, and no field set to an empty string: the error's text, or
/// nothing. Values come back trimmed.
std::optional<std::string> check_metadata_update(thread_metadata_update_params& p);

/// `now` with `patch` applied (null when no field is left).
std::optional<git_info> patched(const std::optional<git_info>& now, const git_info_patch& patch);

// -- thread/revert -------------------------------------------------------------

struct thread_revert_params {
  std::string thread_id;
  std::string before_turn_id;  // kept: every turn before it
};
void from_json(const json& j, thread_revert_params& x);

// -- thread/inject_items ---------------------------------------------------------

struct thread_inject_items_params {
  std::string thread_id;
  std::vector<json> items;  // Responses API items, for the model's history
};
void from_json(const json& j, thread_inject_items_params& x);

/// Codex's checks of injected items (none, or one that is not a Responses
/// API item): the error's text, or nothing.
std::optional<std::string> check_inject_items(const thread_inject_items_params& p);

}  // namespace parley::protocol
