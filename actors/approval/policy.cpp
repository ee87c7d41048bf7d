#include "actors/approval/policy.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace parley {

bool session_grants::covers(const std::string& command) const {
  if (commands.count(command) > 0) return true;
  if (prefixes.empty()) return false;
  auto words = split_simple_command(command);
  if (!words) return false;
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const auto& prefix) {
    return !prefix.empty() && prefix.size() <= words->size()
           && std::equal(prefix.begin(), prefix.end(), words->begin());
  });
}

bool session_grants::covers_paths(const std::vector<std::string>& files) const {
  if (files.empty() || paths.empty()) return false;
  return std::all_of(files.begin(), files.end(), [&](const auto& f) { return paths.count(f) > 0; });
}

policy_verdict evaluate_file_change(const protocol::approval_policy& policy) {
  using kind = protocol::approval_policy::kind;
  if (policy.value == kind::never) return policy_verdict::run;
  if (policy.value == kind::granular && !policy.granular.sandbox_approval)
    return policy_verdict::decline;
  return policy_verdict::ask;
}

policy_verdict evaluate(const protocol::approval_policy& policy, const std::string& command,
                        bool escalated, command_place where) {
  using kind = protocol::approval_policy::kind;
  // What the host cannot confine leaves the sandbox as surely as an
  // escalation does (fail closed).
  bool leaves = escalated || where == command_place::unconfined_host;
  bool nothing_to_leave = where == command_place::full_access;
  switch (policy.value) {
    case kind::never:
      return leaves ? policy_verdict::decline : policy_verdict::run;
    case kind::untrusted:
      return !leaves && is_known_read_only(command) ? policy_verdict::run : policy_verdict::ask;
    case kind::on_request:
      if (!leaves || nothing_to_leave) return policy_verdict::run;
      return policy_verdict::ask;
    case kind::granular:
      if (!leaves || nothing_to_leave) return policy_verdict::run;
      return policy.granular.sandbox_approval ? policy_verdict::ask : policy_verdict::decline;
  }
  return policy_verdict::ask;
}

bool asks_to_retry_outside(const protocol::approval_policy& policy) {
  using kind = protocol::approval_policy::kind;
  switch (policy.value) {
    case kind::untrusted:
      return true;
    case kind::granular:
      return policy.granular.sandbox_approval;
    case kind::on_request:
    case kind::never:
      return false;
  }
  return false;
}

command_place place_of(const protocol::sandbox_policy& sandbox, bool unconfined_host) {
  using kind = protocol::sandbox_policy::kind;
  if (sandbox.type == kind::danger_full_access || sandbox.type == kind::external_sandbox)
    return command_place::full_access;
  return unconfined_host ? command_place::unconfined_host : command_place::confined;
}

std::optional<std::vector<std::string>> split_simple_command(const std::string& command) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == '\'') {
      auto end = command.find('\'', i + 1);
      if (end == std::string::npos) return std::nullopt;
      current.append(command, i + 1, end - i - 1);
      in_word = true;
      i = end;
    } else if (c == '"') {
      ++i;
      for (; i < command.size() && command[i] != '"'; ++i) {
        if (command[i] == '$' || command[i] == '`') return std::nullopt;
        if (command[i] == '\\' && i + 1 < command.size()) ++i;
        current += command[i];
      }
      if (i >= command.size()) return std::nullopt;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= command.size()) return std::nullopt;
      current += command[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
    } else if (std::strchr("|&;<>()$`\n*?[]{}~#=!", c) != nullptr) {
      return std::nullopt;
    } else {
      current += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(current));
  if (words.empty()) return std::nullopt;
  return words;
}

std::optional<std::vector<std::vector<std::string>>> split_command_list(const std::string& command) {
  std::vector<std::vector<std::string>> out;
  std::string part;
  auto flush = [&]() -> bool {
    auto words = split_simple_command(part);
    part.clear();
    if (!words) return false;
    out.push_back(std::move(*words));
    return true;
  };
  char quote = 0;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < command.size()) part += command[i++];
      part += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      part += c;
    } else if (c == '\\' && i + 1 < command.size()) {
      part += c;
      part += command[++i];
    } else if (c == ';' || c == '\n' || c == '|' || (c == '&' && i + 1 < command.size() && command[i + 1] == '&')) {
      if ((c == '|' || c == '&') && i + 1 < command.size() && command[i + 1] == c) ++i;
      if (!flush()) return std::nullopt;
    } else {
      part += c;
    }
  }
  if (quote || !flush()) return std::nullopt;
  return out;
}

bool is_known_read_only(const std::string& command) {
  static constexpr std::array<const char*, 15> programs = {
      "cat", "echo", "false", "grep", "head", "id",     "ls",    "nl",
      "pwd", "stat", "tail",  "true", "uname", "wc", "whoami"};
  auto words = split_simple_command(command);
  if (!words) return false;
  const auto& program = words->front();
  return std::any_of(programs.begin(), programs.end(),
                     [&](const char* p) { return program == p; });
}

std::vector<protocol::command_action> describe_command(const std::string& command) {
  using protocol::command_action;
  command_action action;
  action.command = command;
  auto words = split_simple_command(command);
  if (words) {
    const auto& program = words->front();
    std::vector<std::string> operands;
    for (size_t i = 1; i < words->size(); ++i)
      if ((*words)[i].empty() || (*words)[i][0] != '-') operands.push_back((*words)[i]);
    if ((program == "cat" || program == "head" || program == "tail" || program == "nl")
        && operands.size() == 1) {
      action.type = command_action::kind::read;
      auto slash = operands[0].find_last_of('/');
      action.name = slash == std::string::npos ? operands[0] : operands[0].substr(slash + 1);
      action.path = operands[0];
    } else if (program == "ls" && operands.size() <= 1) {
      action.type = command_action::kind::list_files;
      if (!operands.empty()) action.path = operands[0];
    } else if ((program == "grep" || program == "rg") && !operands.empty()
               && operands.size() <= 2) {
      action.type = command_action::kind::search;
      action.query = operands[0];
      if (operands.size() == 2) action.path = operands[1];
    }
  }
  return {action};
}

std::string display_command(const std::string& command) {
  std::string quoted = "'";
  for (char c : command) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  quoted += "'";
  return "/bin/sh -c " + quoted;
}

}  // namespace parley
