#include "actors/model/wire/compaction.hpp"

#include <algorithm>

#include "actors/model/wire/request_body.hpp"

namespace parley::wire {

using json = nlohmann::json;

namespace {

/// The text parts of a message item, one per line; empty for other items.
std::string message_text(const json& item) {
  std::string out;
  auto content = item.find("content");
  if (content == item.end()) return out;
  if (content->is_string()) return content->get<std::string>();
  if (!content->is_array()) return out;
  for (const auto& part : *content) {
    if (!part.is_object()) continue;
    auto text = part.find("text");
    if (text == part.end() || !text->is_string()) continue;
    if (!out.empty()) out += '\n';
    out += text->get<std::string>();
  }
  return out;
}

bool is_message_of(const json& item, const char* role) {
  return item.is_object() && item.value("type", std::string{"message"}) == "message"
         && item.value("role", std::string{}) == role;
}

}  // namespace

const std::string& compaction_prompt() {
  static const std::string text
      = "The conversation so far is about to be replaced by a summary you write now. Write it "
        "for whoever continues this work without seeing the conversation: what the user wants, "
        "what has been done and decided, the facts, files and commands that matter, and what is "
        "left to do next. Be brief and concrete; answer with the summary only.";
  return text;
}

const std::string& summary_prefix() {
  static const std::string text
      = "The earlier part of this conversation was compacted. Below is a summary of it, written "
        "by the model that took part in it; continue from there.";
  return text;
}

std::string summary_message_text(const std::string& summary) {
  return summary_prefix() + "\n" + summary;
}

bool is_summary_message(const std::string& text) {
  return text.rfind(summary_prefix(), 0) == 0;
}

std::string last_assistant_text(const std::vector<json>& output) {
  for (auto it = output.rbegin(); it != output.rend(); ++it)
    if (is_message_of(*it, "assistant")) return message_text(*it);
  return {};
}

std::vector<json> compacted_history(const std::vector<json>& history, const std::string& summary,
                                    std::size_t user_budget_bytes) {
  std::vector<json> kept;
  std::size_t used = 0;
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (!is_message_of(*it, "user")) continue;
    auto text = message_text(*it);
    if (is_summary_message(text) || text == compaction_prompt()) continue;
    if (used + text.size() > user_budget_bytes) break;
    used += text.size();
    kept.push_back(user_message(text));
  }
  std::reverse(kept.begin(), kept.end());
  kept.push_back(user_message(summary_message_text(summary)));
  return kept;
}

}  // namespace parley::wire
