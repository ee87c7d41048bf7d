#include "actors/store/action_lines.hpp"

#include "actors/core/action_records.hpp"
#include "actors/store/rollout_json.hpp"

namespace parley::store {

using json = nlohmann::json;
using namespace rollout_json;

json action_payload(const action_record& r) {
  auto kind = !r.request.empty() ? r.request : r.file_change ? "fileChange" : "command";
  json p{{"phase", to_string(r.at)}, {"turn_id", r.turn_id},
         {"item_id", r.item_id},     {"kind", kind},
         {"digest", r.digest},       {"item_started_ms", r.item_started_ms},
         {"step", r.step},           {"thread_cwd", r.thread_cwd},
         {"policy", r.policy},       {"writable_roots", r.writable_roots}};
  if (!r.request.empty()) {
    p["request"] = r.request_params;
  } else if (r.file_change) {
    p["patch"] = r.patch;
  } else {
    p["command"] = r.command;
    p["cwd"] = r.cwd;
    if (r.escalated) {
      p["escalated"] = true;
      p["justification"] = r.justification;
    }
    if (r.timeout_ms > 0) p["timeout_ms"] = r.timeout_ms;
  }
  if (!r.sandbox.is_null()) p["sandbox"] = r.sandbox;
  if (r.deadline_ms != 0) p["deadline_ms"] = r.deadline_ms;
  if (r.at != action_record::phase::asked && !r.outcome.empty()) {
    p["outcome"] = r.outcome;
    p["decision"] = r.decision;
    p["stage"] = r.stage;
    if (!r.detail.empty()) p["detail"] = r.detail;
    if (!r.decided_by.empty()) p["decided_by"] = r.decided_by;
    if (!r.answer.is_null()) p["answer"] = r.answer;
  }
  return p;
}

std::optional<action_record> action_of_payload(const json& p) {
  if (!p.is_object()) return std::nullopt;
  auto phase = phase_from(str_of(p, "phase"));
  if (!phase) return std::nullopt;
  action_record r;
  r.at = *phase;
  r.turn_id = str_of(p, "turn_id");
  r.item_id = str_of(p, "item_id");
  if (r.turn_id.empty() || r.item_id.empty()) return std::nullopt;
  auto kind = str_of(p, "kind");
  r.file_change = kind == "fileChange";
  if (kind == "userInput" || kind == "dynamicToolCall" || kind == "mcpToolCall") {
    r.request = kind;
    if (auto i = p.find("request"); i != p.end() && i->is_object()) r.request_params = *i;
    if (r.request_params.is_null()) return std::nullopt;  // nothing to ask again
  }
  if (auto i = p.find("answer"); i != p.end()) r.answer = *i;
  r.command = str_of(p, "command");
  r.cwd = str_of(p, "cwd");
  r.patch = str_of(p, "patch");
  r.digest = str_of(p, "digest");
  r.item_started_ms = opt_int(p, "item_started_ms").value_or(0);
  r.step = opt_int(p, "step").value_or(0);
  r.thread_cwd = str_of(p, "thread_cwd");
  if (auto i = p.find("policy"); i != p.end()) r.policy = *i;
  for (const auto& root : list_of(p, "writable_roots"))
    if (root.is_string()) r.writable_roots.push_back(root.get<std::string>());
  if (auto i = p.find("sandbox"); i != p.end()) r.sandbox = *i;
  if (auto i = p.find("escalated"); i != p.end() && i->is_boolean()) r.escalated = i->get<bool>();
  r.justification = str_of(p, "justification");
  r.timeout_ms = opt_int(p, "timeout_ms").value_or(0);
  r.deadline_ms = opt_int(p, "deadline_ms").value_or(0);
  r.outcome = str_of(p, "outcome");
  if (auto i = p.find("decision"); i != p.end()) r.decision = *i;
  r.stage = str_of(p, "stage");
  r.detail = str_of(p, "detail");
  r.decided_by = str_of(p, "decided_by");
  return r;
}

}  // namespace parley::store
