#pragma once
// `parley rules check`: a dry run of the rules stage. It loads HOME/rules
// the way the approval pipeline does and says what they decide about a
// command or a file change, without running anything.
//
//   parley rules check [--home=DIR] [--json] -- <command words...>
//   parley rules check [--home=DIR] [--json] --path=P [--path=P...] [--cwd=DIR]

#include <optional>
#include <string>
#include <vector>

namespace parley {

/// What `parley rules check` was asked (filled by transport/command_line).
struct rules_check_request {
  std::string home;
  bool json = false;
  std::vector<std::string> command;  // after `--`
  bool has_command = false;          // `--` was given
  std::vector<std::string> paths;
  std::optional<std::string> cwd;
};

/// The result goes to stdout (one line, or one JSON object with --json)
/// whatever the decision, and the exit code is 0; 2 for a usage error, 1 when
/// the rules don't load (the file:line:col error goes to stderr).
int run_rules_check(const rules_check_request& req);

}  // namespace parley
