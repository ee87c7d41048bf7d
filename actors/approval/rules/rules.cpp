// Rules and rule sets: canonical text, matching, and the checks' verdicts.
// The parser is in parser.cpp, the file system side in files.cpp.

#include "actors/approval/rules/rules.hpp"

#include <algorithm>

#include "actors/approval/rules/glob.hpp"

namespace parley::rules {

namespace {

/// A string literal that both Starlark and JSON read back as `s`.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

/// The Codex name, so rule text stays readable by Codex.
const char* codex_name(decision x) {
  switch (x) {
    case decision::allow: return "allow";
    case decision::ask: return "prompt";
    case decision::deny: return "forbidden";
  }
  return "forbidden";
}

/// argv as a person would type it; words that would split or vanish are
/// single-quoted.
std::string display_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (auto& word : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !word.empty() && word.find_first_of(" \t\n'\"\\") == std::string::npos;
    if (plain) {
      out += word;
      continue;
    }
    out += '\'';
    for (char c : word) out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
    out += '\'';
  }
  return out;
}

/// "<rule> at <source> matches <what>[: <justification>]".
std::string explain(const rule& r, const std::string& what) {
  auto out = r.text() + " at " + r.source + " matches \"" + what + "\"";
  if (!r.justification.empty()) out += ": " + r.justification;
  return out;
}

}  // namespace

const char* to_string(decision x) {
  switch (x) {
    case decision::allow: return "allow";
    case decision::ask: return "ask";
    case decision::deny: return "deny";
  }
  return "deny";
}

load_error::load_error(const std::string& source, size_t line, size_t column,
                       const std::string& message)
    : std::runtime_error(line == 0 ? source + ": " + message
                                   : source + ":" + std::to_string(line) + ":"
                                         + std::to_string(column) + ": " + message),
      source_(source),
      line_(line),
      column_(column),
      message_(message) {}

std::string rule::text() const {
  if (what == kind::path)
    return "path_rule(glob=" + quoted(glob) + ", decision=\"" + codex_name(verdict) + "\")";
  std::string words;
  for (auto& alternatives : pattern) {
    if (!words.empty()) words += ',';
    if (alternatives.size() == 1) {
      words += quoted(alternatives.front());
      continue;
    }
    words += '[';
    for (size_t i = 0; i < alternatives.size(); ++i)
      words += (i > 0 ? "," : "") + quoted(alternatives[i]);
    words += ']';
  }
  return "prefix_rule(pattern=[" + words + "], decision=\"" + codex_name(verdict) + "\")";
}

bool rule::matches_command(const std::vector<std::string>& argv) const {
  if (what != kind::prefix || pattern.empty() || argv.size() < pattern.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    auto& alternatives = pattern[i];
    if (std::find(alternatives.begin(), alternatives.end(), argv[i]) == alternatives.end())
      return false;
  }
  return true;
}

bool rule::matches_path(const std::string& path, const std::string& cwd) const {
  if (what != kind::path || glob.empty()) return false;
  if (glob[0] == '/') return glob_matches(glob, path);
  if (auto relative = relative_under(path, cwd); relative && glob_matches(glob, *relative))
    return true;
  // `**/.env` means "a .env anywhere", even outside the change's cwd.
  return glob.rfind("**/", 0) == 0 && !path.empty() && path[0] == '/'
         && glob_matches(glob, path.substr(1));
}

std::optional<match> rule_set::check_command(const std::vector<std::string>& argv) const {
  const rule* best = nullptr;
  for (auto& r : rules_)
    if (r.matches_command(argv) && (!best || r.verdict > best->verdict)) best = &r;
  if (!best) return std::nullopt;
  return match{best->verdict, *best, explain(*best, display_argv(argv))};
}

std::optional<match> rule_set::check_paths(const std::vector<std::string>& paths,
                                           const std::string& cwd) const {
  auto base = cwd.empty() ? cwd : normalise_path(cwd, "");
  // The most restrictive rule of each path; nullptr when none matches.
  std::vector<std::string> normalised;
  std::vector<const rule*> deciding;
  for (auto& p : paths) {
    normalised.push_back(normalise_path(p, base));
    const rule* best = nullptr;
    for (auto& r : rules_)
      if (r.matches_path(normalised.back(), base) && (!best || r.verdict > best->verdict))
        best = &r;
    deciding.push_back(best);
  }
  // The first path whose rule says `x`, if any.
  auto first_with = [&](decision x) -> std::optional<size_t> {
    for (size_t i = 0; i < deciding.size(); ++i)
      if (deciding[i] && deciding[i]->verdict == x) return i;
    return std::nullopt;
  };
  auto decided_by = [&](size_t i) {
    return match{deciding[i]->verdict, *deciding[i], explain(*deciding[i], normalised[i])};
  };
  if (auto i = first_with(decision::deny)) return decided_by(*i);
  if (auto i = first_with(decision::ask)) return decided_by(*i);
  auto allowed = first_with(decision::allow);
  if (!allowed) return std::nullopt;  // no path matches any rule
  for (size_t i = 0; i < deciding.size(); ++i) {
    if (deciding[i]) continue;
    return match{decision::ask, *deciding[*allowed],
                 "no rule matches \"" + normalised[i] + "\" (" + explain(*deciding[*allowed],
                 normalised[*allowed]) + "), and a change runs without asking only when every "
                 "path is allowed"};
  }
  if (paths.size() == 1) return decided_by(0);
  std::string why = "every path is allowed: ";
  for (size_t i = 0; i < deciding.size(); ++i)
    why += (i > 0 ? "; " : "") + explain(*deciding[i], normalised[i]);
  return match{decision::allow, *deciding[*allowed], why};
}

}  // namespace parley::rules
