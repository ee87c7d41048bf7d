#pragma once
// Pure policy logic: does a command need a decision before it runs?

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/items.hpp"
#include "protocol/types.hpp"

namespace parley {

/// What the thread remembers from "acceptForSession" and execpolicy amendments.
struct session_grants {
  std::set<std::string> commands;                 // exact command strings
  std::vector<std::vector<std::string>> prefixes;  // argv prefixes
  std::set<std::string> paths;                    // files accepted for the session

  bool covers(const std::string& command) const;
  /// Every one of `files` (absolute) was accepted for the session.
  bool covers_paths(const std::vector<std::string>& files) const;
};

enum class policy_verdict {
  run,      // run without asking
  ask,      // a decision is needed
  decline,  // refused without asking (granular policy with sandbox_approval off)
};

/// The policy of protocol.md §2 "AskForApproval", as parley applies it to a
/// shell command:
///   never      -> run
///   on-request -> ask for every command
///   untrusted  -> ask, except for known read-only commands (is_known_read_only)
///   granular   -> ask when sandbox_approval is set, otherwise decline
/// A command that asks to leave the sandbox (`escalated`) is asked about
/// under every policy that asks at all (untrusted's read-only ones too) and
/// declined under `never`, which asks nobody: only an accept runs it outside.
/// "ask" starts the approval pipeline (rules, session grants, hooks, client),
/// which may still decide without asking anyone.
policy_verdict evaluate(const protocol::approval_policy& policy, const std::string& command,
                        bool escalated = false);

/// The same for a file change: never -> run, granular without
/// sandbox_approval -> decline, otherwise ask.
policy_verdict evaluate_file_change(const protocol::approval_policy& policy);

/// A single simple command (no pipes, redirections, substitutions, chaining)
/// whose program only reads: cat, echo, false, grep, head, id, ls, nl, pwd,
/// stat, tail, true, uname, wc, whoami.
bool is_known_read_only(const std::string& command);

/// Splits a command line into words the way /bin/sh would for simple cases
/// (single and double quotes, backslash escapes). Returns nullopt when the
/// line uses shell syntax beyond that (pipes, redirections, $, `, ;, &, ...).
std::optional<std::vector<std::string>> split_simple_command(const std::string& command);

/// Splits a command line joined by `;`, `&&`, `||`, `|` or newlines into its
/// simple commands (each as split_simple_command gives it). nullopt when any
/// part uses other shell syntax, or a separator sits inside quotes in a way
/// this does not follow.
std::optional<std::vector<std::vector<std::string>>> split_command_list(const std::string& command);

/// How a command is summarised for display: read / listFiles / search / unknown.
std::vector<protocol::command_action> describe_command(const std::string& command);

/// The command as shown in items and approvals: the real shell invocation.
std::string display_command(const std::string& command);

}  // namespace parley
