#pragma once
// The rules a runtime decides with: loaded once at start (a file that does
// not load stops the start), read by every approval, and replaced as a whole
// when an execpolicy amendment adds a rule. Amendments are file I/O, so they
// go through the rules keeper, a detached actor.
//
// Per tenant (issue 22): the files in the directory hold for every tenant
// (the host's rules, and the default tenant's amendments in default.rules,
// where Codex keeps them); another tenant's amendments go to
// tenants/NAME/default.rules and hold for its threads alone.

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/approval/rules/rules.hpp"
#include "actors/core/atoms.hpp"
#include "actors/core/interfaces.hpp"

namespace parley::rules {

class rules_book {
 public:
  /// Loads every *.rules file in `dir` (none: no rules), and each tenant's
  /// in dir/tenants/NAME. Throws load_error.
  explicit rules_book(std::string dir);

  /// The rules now (the default tenant's: the shared ones); safe from any thread.
  std::shared_ptr<const rule_set> current() const;
  /// The rules a tenant's thread is decided with: the shared ones, then its
  /// own amendments. No I/O; safe from any thread.
  std::shared_ptr<const rule_set> current(const std::string& tenant) const;

  /// Appends `prefix` as an allow rule to the tenant's default.rules
  /// (atomically) and swaps in the reloaded rules. Blocking file I/O: the
  /// rules keeper's job.
  void amend(const std::vector<std::string>& prefix, const std::string& tenant = "default");

  const std::string& dir() const { return dir_; }
  /// Where a tenant's amendments are written (dir itself for the default).
  std::string dir_of(const std::string& tenant) const;

 private:
  void reload_tenant(const std::string& tenant);

  std::string dir_;
  mutable std::mutex mutex_;
  std::shared_ptr<const rule_set> shared_;
  /// The shared rules followed by each tenant's own (tenants with none: absent).
  std::map<std::string, std::shared_ptr<const rule_set>> by_tenant_;
};

}  // namespace parley::rules

namespace parley {

/// The rules keeper (rules_actor, core/interfaces.hpp): writes execpolicy
/// amendments (detached: file I/O).
rules_actor::behavior_type rules_keeper(rules_actor::pointer self,
                                        std::shared_ptr<rules::rules_book> book);

}  // namespace parley
