#include "actors/approval/plan.hpp"

#include <algorithm>

namespace parley {

namespace {

/// Every path a file change touches (a move's destination included).
std::vector<std::string> touched_paths(const approval_ask& ask) {
  std::vector<std::string> paths;
  for (const auto& c : ask.changes) {
    paths.push_back(c.path);
    if (c.move_path) paths.push_back(*c.move_path);
  }
  return paths;
}

/// A list of simple commands (`a && b; c | d`): a rule that forbids any one
/// of them forbids the whole line; the rules allow it only if they allow
/// every one; otherwise the line is left to the next stages.
std::optional<rules::match> check_command_list(const rules::rule_set& rules,
                                               const std::string& line) {
  auto parts = split_command_list(line);
  if (!parts) return std::nullopt;
  std::optional<rules::match> strictest;
  bool all_allowed = true;
  for (const auto& words : *parts) {
    auto m = rules.check_command(words);
    if (!m || m->verdict != rules::decision::allow) all_allowed = false;
    if (m && (!strictest || m->verdict > strictest->verdict)) strictest = std::move(m);
  }
  if (strictest && strictest->verdict == rules::decision::allow && !all_allowed)
    return std::nullopt;
  return strictest;
}

bool forbids(const std::optional<rules::match>& m) {
  return m && m->verdict == rules::decision::deny;
}

}  // namespace

bool hook_set::review(hooks::action_kind what) const {
  if (in_process && !in_process->empty()) return true;
  return programs && std::any_of(programs->begin(), programs->end(), [&](const auto& spec) {
           return spec.reviews(what);
         });
}

bool approval_plan::waits() const {
  if (forbids(rule)) return false;
  if (rule && rule->verdict == rules::decision::ask) return true;
  bool allowed = (rule && rule->verdict == rules::decision::allow) || granted;
  return !allowed || hooks_review;
}

approval_plan plan_approval(policy_verdict verdict, const approval_ask& ask,
                            const rules::rule_set* rules, const session_grants& grants,
                            const hook_set& hooks) {
  approval_plan plan;
  if (verdict == policy_verdict::decline) {
    plan.what = approval_plan::route::refuse;
    plan.refusal = "declined by policy";
    return plan;
  }
  if (rules) plan.rule = check_rules(*rules, ask);
  if (verdict == policy_verdict::run) {
    // No approval needed, but a forbidding rule still stops the action.
    if (forbids(plan.rule)) {
      plan.what = approval_plan::route::refuse;
      plan.refusal = "declined: " + plan.rule->explanation;
    } else {
      plan.what = approval_plan::route::run;
    }
    return plan;
  }
  plan.what = approval_plan::route::decide;
  plan.granted = granted(ask, grants);
  plan.hooks_review = hooks.review(ask.what);
  return plan;
}

std::optional<rules::match> check_rules(const rules::rule_set& rules, const approval_ask& ask) {
  if (rules.size() == 0) return std::nullopt;
  if (ask.is_file_change()) return rules.check_paths(touched_paths(ask), ask.cwd);
  if (auto words = split_simple_command(ask.raw_command)) return rules.check_command(*words);
  return check_command_list(rules, ask.raw_command);
}

bool granted(const approval_ask& ask, const session_grants& grants) {
  if (!ask.is_file_change()) return grants.covers(ask.raw_command);
  return grants.covers_paths(touched_paths(ask));
}

hooks::review_request review_of(const approval_ask& ask) {
  hooks::review_request r;
  r.what = ask.what;
  r.approval_key = ask.key;
  r.thread_id = ask.thread_id;
  r.turn_id = ask.turn_id();
  r.item_id = ask.item_id();
  r.cwd = ask.cwd;
  r.digest = ask.digest;
  if (ask.is_file_change()) {
    r.reason = ask.file.reason;
    for (const auto& c : ask.changes)
      r.changes.push_back({c.path, protocol::to_string(c.type), c.move_path, c.diff});
  } else {
    r.reason = ask.command.reason;
    r.command = ask.raw_command;
    r.argv = split_simple_command(ask.raw_command);
  }
  return r;
}

}  // namespace parley
