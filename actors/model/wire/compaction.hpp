#pragma once
// Compacting a thread's model context: the request that asks the model for
// a summary, and the context that replaces the history afterwards. As Codex
// 0.169 shapes it (not in its words): the history plus one more user
// message asking for a hand-over summary, sent without tools; the new
// context is the user's own recent messages, then the summary as a user
// message that says what it is. Pure: JSON in, JSON out.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parley::wire {

/// The user message that asks for the summary (the request's last item).
const std::string& compaction_prompt();

/// What leads the summary when the model is given it back.
const std::string& summary_prefix();

/// The summary as the model is given it: the prefix, a line break, the text.
std::string summary_message_text(const std::string& summary);

/// Whether a user message's text is a compaction's summary (so a later
/// compaction does not keep it as something the user said).
bool is_summary_message(const std::string& text);

/// The text of the last assistant message of a response's output items
/// (empty when it said nothing).
std::string last_assistant_text(const std::vector<nlohmann::json>& output);

/// The context that replaces `history`: the user's messages in it, the most
/// recent ones that fit in `user_budget_bytes` (older ones dropped first;
/// earlier summaries are not the user's), then the summary message.
std::vector<nlohmann::json> compacted_history(const std::vector<nlohmann::json>& history,
                                              const std::string& summary,
                                              std::size_t user_budget_bytes = 80'000);

}  // namespace parley::wire
