#pragma once
// `parley rules check`: a dry run of the rules stage. It loads HOME/rules
// the way the approval pipeline does and says what they decide about a
// command or a file change, without running anything.
//
//   parley rules check [--home=DIR] [--json] -- <command words...>
//   parley rules check [--home=DIR] [--json] --path=P [--path=P...] [--cwd=DIR]

#include <string>
#include <vector>

namespace parley {

/// `args` are the words after `rules`. The result goes to stdout (one line,
/// or one JSON object with --json) whatever the decision, and the exit code
/// is 0; 2 for a usage error, 1 when the rules don't load (the file:line:col
/// error goes to stderr).
int run_rules_command(const std::vector<std::string>& args);

}  // namespace parley
