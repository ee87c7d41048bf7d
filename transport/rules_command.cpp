#include "transport/rules_command.hpp"

#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "actors/core/config.hpp"
#include "actors/approval/rules/rules.hpp"

namespace parley {

namespace {

constexpr const char* usage
    = "  parley rules check [--home=DIR] [--json] -- COMMAND WORDS...\n"
      "  parley rules check [--home=DIR] [--json] --path=P [--path=P...] [--cwd=DIR]\n";

int usage_error(const std::string& message) {
  std::cerr << "parley: " << message << "\nusage:\n" << usage;
  return 2;
}

std::string current_dir() {
  std::string buf(4096, '\0');
  if (!::getcwd(buf.data(), buf.size())) return "/";
  buf.resize(buf.find('\0'));
  return buf;
}

/// "a", "b" for the no-match sentence.
std::string quoted_list(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace

int run_rules_check(const rules_check_request& req) {
  if (req.has_command == !req.paths.empty())
    return usage_error("give either `-- COMMAND WORDS...` or --path=P");
  if (req.has_command && req.command.empty()) return usage_error("no command words after `--`");
  if (req.has_command && req.cwd) return usage_error("--cwd goes with --path");
  for (auto& p : req.paths)
    if (p.empty()) return usage_error("empty --path");

  rules::rule_set rules;
  try {
    rules = rules::rule_set::load_dir(rules::rules_dir_of(req.home));
  } catch (const rules::load_error& e) {
    std::cerr << "parley: " << e.what() << "\n";
    return 1;
  }

  std::optional<rules::match> result;
  std::string subject;  // what the no-match sentence names
  if (req.has_command) {
    result = rules.check_command(req.command);
    subject = "\"" + quoted_list(req.command, " ") + "\"";
  } else {
    result = rules.check_paths(req.paths, req.cwd ? *req.cwd : current_dir());
    subject = "\"" + quoted_list(req.paths, "\", \"") + "\"";
  }
  auto explanation = result ? result->explanation
                            : "no rule matches " + subject
                                  + ": the approval policy and the next stages decide";
  if (req.json) {
    nlohmann::ordered_json out;
    out["decision"] = result ? nlohmann::ordered_json(rules::to_string(result->verdict)) : nullptr;
    out["rule"] = result ? nlohmann::ordered_json(result->matched.text()) : nullptr;
    out["source"] = result ? nlohmann::ordered_json(result->matched.source) : nullptr;
    out["explanation"] = explanation;
    std::cout << out.dump() << "\n";
  } else if (result) {
    std::cout << rules::to_string(result->verdict) << ": " << explanation << "\n";
  } else {
    std::cout << explanation << "\n";
  }
  return 0;
}

}  // namespace parley
