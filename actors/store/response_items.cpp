#include "actors/store/response_items.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "actors/store/turn_items.hpp"

namespace parley::store {

using json = nlohmann::json;

namespace {

json message(const char* role, const char* content_type, const std::string& text) {
  return json{{"type", "message"},
              {"role", role},
              {"content", json::array({{{"type", content_type}, {"text", text}}})}};
}

/// What the model was told about a command: Codex's wording.
std::string command_output(const protocol::command_execution_item& c) {
  if (c.status == protocol::item_status::declined) return "rejected by user";
  return "Process exited with code " + std::to_string(c.exit_code.value_or(-1)) + "\nOutput:\n"
         + c.aggregated_output.value_or("");
}

/// What the model is told about the user's own command (thread/shellCommand):
/// a user message in Codex's wording, so either runtime's model reads it alike.
std::string user_shell_text(const protocol::command_execution_item& c) {
  const auto& actions = c.command_actions;
  auto script = actions.empty() ? c.command : actions.front().command;
  auto ms = c.duration_ms.value_or(0);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.4f", static_cast<double>(ms) / 1000.0);
  return "<user_shell_command>\n<command>\n" + script + "\n</command>\n<result>\nExit code: "
         + std::to_string(c.exit_code.value_or(-1)) + "\nDuration: " + seconds
         + " seconds\nOutput:\n" + c.aggregated_output.value_or("")
         + "\n</result>\n</user_shell_command>";
}

/// What the thread's model is told after a review (review/start): that
/// the user asked for one, and what the reviewer found, in parley's words.
std::string review_result_text(const std::string& review) {
  return "<review_result>\nThe user asked for a code review of their changes; the reviewer's "
         "answer follows. The user may ask you to act on parts of it.\n\n"
         + review + "\n</review_result>";
}

}  // namespace

std::vector<json> response_items_of(const protocol::thread_item& item) {
  if (auto* r = std::get_if<protocol::exited_review_mode_item>(&item))
    return {message("user", "input_text", review_result_text(r->review))};
  if (auto* u = std::get_if<protocol::user_message_item>(&item))
    return {message("user", "input_text", protocol::joined_text(u->content))};
  if (auto* a = std::get_if<protocol::agent_message_item>(&item))
    return {message("assistant", "output_text", a->text)};
  if (auto* c = std::get_if<protocol::command_execution_item>(&item); c && c->source == "userShell")
    return {message("user", "input_text", user_shell_text(*c))};
  if (auto* c = std::get_if<protocol::command_execution_item>(&item))
    return {json{{"type", "function_call"},
                 {"name", "shell"},
                 {"call_id", c->id},
                 {"arguments", json{{"command", argv_of(*c)}}.dump()}},
            json{{"type", "function_call_output"}, {"call_id", c->id}, {"output", command_output(*c)}}};
  return {};
}

std::vector<json> response_items_of(const std::vector<protocol::turn>& turns) {
  std::vector<json> out;
  for (const auto& t : turns)
    for (const auto& item : t.items)
      for (auto& r : response_items_of(item)) out.push_back(std::move(r));
  return out;
}

json compaction_summary_item(const std::string& message_text) {
  return message("user", "input_text", message_text);
}

void compact_context(std::vector<context_item>& context, std::vector<std::string>& compacted_turns,
                     std::vector<std::string> turn_ids, const std::string& turn_id,
                     std::vector<json> replacement) {
  context.clear();
  for (auto& item : replacement) context.push_back(context_item{turn_id, std::move(item)});
  compacted_turns = std::move(turn_ids);
}

std::vector<json> model_history(const stored_thread& thread, const std::string& except_turn) {
  // Each turn's context in the order it was stored, and whether the turn
  // wrote any itself (else its items stand for it). Items a client injected
  // (thread/inject_items) keep their place: among what the turn stored, or
  // after the items that stand for it.
  struct turn_context {
    std::vector<const json*> items;
    bool own = false;
  };
  std::unordered_map<std::string, turn_context> by_turn;
  for (const auto& c : thread.context) {
    auto& tc = by_turn[c.turn_id];
    tc.items.push_back(&c.item);
    tc.own = tc.own || !c.injected;
  }
  std::vector<json> out;
  if (auto before = by_turn.find(""); before != by_turn.end())
    for (const auto* item : before->second.items) out.push_back(*item);
  for (const auto& t : thread.meta.turns) {
    if (t.id == except_turn) continue;
    // A review's own work (its commands) is the reviewer's, not the
    // thread's: only its result and answer stand for it.
    bool review = !t.items.empty()
                  && std::holds_alternative<protocol::entered_review_mode_item>(t.items.front());
    auto found = by_turn.find(t.id);
    bool own = found != by_turn.end() && found->second.own;
    bool compacted = std::find(thread.compacted_turns.begin(), thread.compacted_turns.end(), t.id)
                     != thread.compacted_turns.end();
    if (!own && !compacted)
      for (const auto& item : t.items) {
        if (review && !std::holds_alternative<protocol::exited_review_mode_item>(item)
            && !std::holds_alternative<protocol::agent_message_item>(item))
          continue;
        for (auto& r : response_items_of(item)) out.push_back(std::move(r));
      }
    if (found != by_turn.end())
      for (const auto* item : found->second.items) out.push_back(*item);
  }
  return out;
}

}  // namespace parley::store
