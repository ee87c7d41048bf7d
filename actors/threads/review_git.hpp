#pragma once
// What a review looks at, read from git (review/start): the working tree's
// changes, the changes since a base branch's merge base, or one commit.
//
// git runs as a subprocess through the process reactor (never on a
// scheduler thread), one command after another, confined to the thread's
// sandbox as any command of the thread is, in the command environment. The
// probe answers `atom::get` once: the facts, or an error saying which git
// command failed and what git said.

#include <memory>
#include <string>
#include <vector>

#include "actors/core/interfaces.hpp"
#include "actors/core/services.hpp"
#include "protocol/review.hpp"

namespace parley {

/// What git said about a review's target.
struct review_facts {
  std::string base_sha;      // base branch: the merge base
  std::string commit_sha;    // commit: the full sha
  std::string commit_title;  // commit: its subject
  std::string status;        // uncommitted changes: git status --porcelain
  std::string diff;          // the changes, as git diff shows them (bounded)
  bool diff_cut = false;     // the diff was longer than the bound
  std::vector<std::string> files;  // the changed (and untracked) files
};

/// Where and how git runs: the thread's cwd and sandbox.
struct review_git_setup {
  protocol::review_target target;
  std::string cwd;
  protocol::sandbox_policy sandbox;
};

using review_git_actor = caf::typed_actor<
    caf::reacts_to<atom::output, std::string>, caf::reacts_to<atom::err_output, std::string>,
    caf::reacts_to<atom::exited, exit_info>, caf::reacts_to<atom::timeout>,
    caf::replies_to<atom::get>::with<review_facts>>;

/// Spawned by the review's turn (linked: git dies with it).
review_git_actor spawn_review_git(caf::local_actor* parent, review_git_setup setup,
                                  runtime_services svc);

}  // namespace parley

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::review_facts)
