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
  /// MCP tools whose calls were accepted for the session (mcp_tool_key).
  std::set<std::string> mcp_tools;

  bool covers(const std::string& command) const;
  /// Every one of `files` (absolute) was accepted for the session.
  bool covers_paths(const std::vector<std::string>& files) const;
};

/// How session_grants::mcp_tools names a server's tool.
inline std::string mcp_tool_key(const std::string& server, const std::string& tool) {
  return server + '\n' + tool;  // neither name holds a newline that matters here
}

enum class policy_verdict {
  run,      // run without asking
  ask,      // a decision is needed
  decline,  // refused without asking (granular policy with sandbox_approval off)
};

/// Where a command runs when nobody is asked (what an approval would let it
/// leave).
enum class command_place {
  /// Confined to the thread's sandbox (read-only, workspace-write).
  confined,
  /// The thread's sandbox needs confining, but this host cannot confine and
  /// the operator accepted running unconfined (`--sandbox-unconfined`): the
  /// command would leave the sandbox, so it counts as an escalation.
  unconfined_host,
  /// danger-full-access or an external sandbox: there is no sandbox to leave.
  full_access,
};

/// The policy of protocol.md §2 "AskForApproval", as parley applies it to a
/// shell command (Codex 0.169's render_decision_for_unmatched_command):
/// approvals ask to leave the sandbox. `escalated`: the model asks to run
/// the command outside it (`sandbox_permissions: "require_escalated"`).
///   never      -> run confined; an escalation is declined (it asks nobody)
///   on-request -> run confined; ask for an escalation
///   granular   -> run confined; ask for an escalation when sandbox_approval
///                 is set, otherwise decline it without asking
///   untrusted  -> ask, except known read-only commands (is_known_read_only)
///                 that stay confined; an escalation always asks
/// Fail closed: on an `unconfined_host` every command counts as escalated.
/// With `full_access` nothing is left: on-request and granular run every
/// command (an escalation too, as Codex), never and untrusted as above.
/// "ask" starts the approval pipeline (rules, session grants, hooks, client),
/// which may still decide without asking anyone.
policy_verdict evaluate(const protocol::approval_policy& policy, const std::string& command,
                        bool escalated = false, command_place where = command_place::confined);

/// Whether a confined command that the sandbox seems to have refused is
/// offered to a person to run again outside it (Codex 0.169's retry after a
/// sandbox denial): under untrusted, and granular with sandbox_approval.
/// on-request does not (the model asks to escalate instead), nor never.
bool asks_to_retry_outside(const protocol::approval_policy& policy);

/// Where a thread's commands run when nobody is asked: `sandbox` is the
/// thread's, `unconfined_host` whether this host runs would-be-confined
/// commands unconfined (turn_settings::commands_unconfined).
command_place place_of(const protocol::sandbox_policy& sandbox, bool unconfined_host);

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
