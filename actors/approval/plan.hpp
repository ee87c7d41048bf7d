#pragma once
// What happens to an action before it runs, decided once: a pure function of
// the policy's verdict, the ask, a snapshot of the rules, the thread's
// session grants and the hooks configured. The turn plans; the approval actor
// carries the plan out and never looks at the rules again, so a rule book
// that changes in between cannot make the two disagree.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/approval/hooks/approval_hook.hpp"
#include "actors/approval/hooks/external_hook.hpp"
#include "actors/approval/policy.hpp"
#include "actors/approval/rules/rules.hpp"
#include "actors/core/messages.hpp"

namespace parley {

/// The hooks that may review an ask (a view of the runtime's configuration).
struct hook_set {
  const std::vector<std::shared_ptr<hooks::approval_hook>>* in_process = nullptr;
  const std::vector<hooks::external_hook_spec>* programs = nullptr;

  /// Whether any hook reviews actions of this kind.
  bool review(hooks::action_kind what) const;
};

struct approval_plan {
  enum class route {
    run,     // no decision needed: the action runs
    refuse,  // refused without asking anyone (policy, or a forbidding rule)
    decide,  // the approval actor decides: rules, grants, hooks, client
  };
  route what = route::decide;
  /// route::refuse: why, as the item's result says it.
  std::string refusal;
  /// What the rules say (evaluated once, here); nullopt: no rule applies.
  std::optional<rules::match> rule;
  /// The thread's session grants already cover the action.
  bool granted = false;
  /// Some hook reviews this kind of action.
  bool hooks_review = false;

  /// Whether deciding waits on someone (a hook or the client), so the thread
  /// shows waitingOnApproval meanwhile. Rules and grants decide at once.
  bool waits() const;
};

/// Plans an ask. `rules` may be null (no rules directory).
approval_plan plan_approval(policy_verdict verdict, const approval_ask& ask,
                            const rules::rule_set* rules, const session_grants& grants,
                            const hook_set& hooks);

/// What the rules say about an ask: a command by its words (a list of simple
/// commands joined by `;`, `&&`, `||`, `|` by each of them), a file change by
/// every path it touches. nullopt: no rule applies.
std::optional<rules::match> check_rules(const rules::rule_set& rules, const approval_ask& ask);

/// Whether the session grants cover the ask's command or every file.
bool granted(const approval_ask& ask, const session_grants& grants);

/// The review request the hooks see for an ask.
hooks::review_request review_of(const approval_ask& ask);

}  // namespace parley
