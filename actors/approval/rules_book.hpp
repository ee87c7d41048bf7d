#pragma once
// The rules a runtime decides with: loaded once at start (a file that does
// not load stops the start), read lock-free by every approval, and replaced
// as a whole when an execpolicy amendment adds a rule. Amendments are file
// I/O, so they go through the rules keeper, a detached actor.

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <memory>
#include <string>
#include <vector>

#include "actors/approval/rules/rules.hpp"
#include "actors/core/atoms.hpp"
#include "actors/core/interfaces.hpp"

namespace parley::rules {

class rules_book {
 public:
  /// Loads every *.rules file in `dir` (none: no rules). Throws load_error.
  explicit rules_book(std::string dir);

  /// The rules now; safe from any thread.
  std::shared_ptr<const rule_set> current() const;

  /// Appends `prefix` as an allow rule to dir/default.rules (atomically) and
  /// swaps in the reloaded rules. Blocking file I/O: the rules keeper's job.
  void amend(const std::vector<std::string>& prefix);

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::shared_ptr<const rule_set> current_;  // std::atomic_load / atomic_store
};

}  // namespace parley::rules

namespace parley {

/// The rules keeper (rules_actor, core/interfaces.hpp): writes execpolicy
/// amendments (detached: file I/O).
rules_actor::behavior_type rules_keeper(rules_actor::pointer self,
                                        std::shared_ptr<rules::rules_book> book);

}  // namespace parley
