#include "bench/mock_model/script.hpp"

#include <cctype>
#include <cstdlib>

namespace parley::mock_model {

namespace {

constexpr std::string_view prefix = "mock:";
constexpr std::string_view end_of_patch = "*** End Patch";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  for (;;) {
    s = trim(s);
    if (s.empty()) return words;
    auto end = s.find_first_of(" \t");
    words.push_back(s.substr(0, end));
    if (end == std::string_view::npos) return words;
    s.remove_prefix(end);
  }
}

std::optional<unsigned long> parse_number(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  unsigned long n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<unsigned long>(c - '0');
  }
  return n;
}

// Reads `times=N` and `at=N`; false on any other word.
bool parse_fault_option(std::string_view word, fault& f) {
  auto eq = word.find('=');
  if (eq == std::string_view::npos) return false;
  auto key = word.substr(0, eq);
  auto value = parse_number(word.substr(eq + 1));
  if (!value || *value == 0) return false;
  if (key == "times") {
    f.times = static_cast<unsigned>(*value);
    return true;
  }
  if (key == "at") {
    f.at = static_cast<unsigned>(*value);
    return true;
  }
  return false;
}

// The fault directives: `http`, `cut`, `stall`, `malformed`, `failed`. Returns an error
// message, or an empty string once `f` is filled in.
std::string parse_fault(std::string_view keyword, std::string_view rest, fault& f) {
  auto words = split_words(rest);
  std::size_t next = 0;
  if (keyword == "http") {
    f.kind = fault_kind::http;
    auto status = words.empty() ? std::nullopt : parse_number(words[0]);
    if (!status || *status < 100 || *status > 599) return "http needs a STATUS (100-599)";
    f.status = static_cast<int>(*status);
    next = 1;
  } else if (keyword == "cut") {
    f.kind = fault_kind::cut;
  } else if (keyword == "stall") {
    f.kind = fault_kind::stall;
    auto ms = words.empty() ? std::nullopt : parse_number(words[0]);
    if (!ms) return "stall needs MS";
    f.stall_ms = static_cast<long>(*ms);
    next = 1;
  } else if (keyword == "malformed") {
    f.kind = fault_kind::malformed;
  } else {  // failed MESSAGE [times=N] [at=N]: options only at the end of the line
    f.kind = fault_kind::failed;
    while (!words.empty() && parse_fault_option(words.back(), f)) {
      rest = trim(rest.substr(0, static_cast<std::size_t>(words.back().data() - rest.data())));
      words.pop_back();
    }
    f.message = rest.empty() ? "mock: response failed" : std::string(rest);
    return {};
  }
  for (; next < words.size(); ++next) {
    auto word = words[next];
    if (f.kind == fault_kind::http && word.substr(0, 12) == "retry-after=") {
      f.retry_after = std::string(word.substr(12));
      if (f.retry_after.empty()) return "retry-after needs a value";
    } else if (f.kind == fault_kind::stall && word == "close") {
      f.close_after = true;
    } else if (!parse_fault_option(word, f)) {
      return "unknown option " + std::string(word);
    }
  }
  return {};
}

bool is_fault(std::string_view keyword) {
  return keyword == "http" || keyword == "cut" || keyword == "stall" || keyword == "malformed"
         || keyword == "failed";
}

std::optional<action_kind> action_of(std::string_view keyword) {
  if (keyword == "say") return action_kind::say;
  if (keyword == "reason") return action_kind::reason;
  if (keyword == "run") return action_kind::run;
  if (keyword == "shell") return action_kind::shell;
  if (keyword == "tool") return action_kind::tool;
  return std::nullopt;
}

// One directive line (without the patch, which spans lines). Returns an error or "".
std::string parse_directive(std::string_view line, script& s) {
  auto body = trim(line.substr(prefix.size()));
  auto space = body.find_first_of(" \t");
  auto keyword = body.substr(0, space);
  auto rest = space == std::string_view::npos ? std::string_view() : trim(body.substr(space));
  if (auto kind = action_of(keyword)) {
    if (rest.empty()) return std::string(keyword) + " needs an argument";
    s.actions.push_back({*kind, std::string(rest)});
    return {};
  }
  if (keyword == "usage") {
    auto words = split_words(rest);
    auto in = words.size() == 2 ? parse_number(words[0]) : std::nullopt;
    auto out = words.size() == 2 ? parse_number(words[1]) : std::nullopt;
    if (!in || !out) return "usage needs IN OUT";
    s.usage = token_usage{*in, *out};
    return {};
  }
  if (keyword == "summary") {  // a setting for a later compaction (request_turn.hpp)
    if (rest.empty()) return "summary needs TEXT";
    return {};
  }
  if (keyword == "pace") {
    auto ms = parse_number(rest);
    if (!ms) return "pace needs MS";
    s.pace_ms = static_cast<long>(*ms);
    return {};
  }
  if (is_fault(keyword)) {
    fault f{fault_kind::http, std::string(trim(line)), 1, 1, 0, {}, 0, false, {}};
    auto error = parse_fault(keyword, rest, f);
    if (error.empty()) s.faults.push_back(std::move(f));
    return error;
  }
  return "unknown directive " + std::string(keyword);
}

}  // namespace

bool is_tool_call(action_kind kind) {
  return kind != action_kind::say && kind != action_kind::reason;
}

script parse_script(std::string_view user_text) {
  script s;
  auto lines = split_lines(user_text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto line = trim(lines[i]);
    if (line.substr(0, prefix.size()) != prefix) continue;
    s.has_directives = true;
    auto body = trim(line.substr(prefix.size()));
    if (body != "patch") {
      if (auto error = parse_directive(line, s); !error.empty())
        s.errors.push_back("`" + std::string(line) + "`: " + error);
      continue;
    }
    // The patch is the following lines, verbatim, through `*** End Patch`.
    std::string patch;
    while (++i < lines.size()) {
      if (!patch.empty()) patch += '\n';
      patch += lines[i];
      if (trim(lines[i]) == end_of_patch) break;
    }
    if (patch.empty())
      s.errors.push_back("`mock: patch` is followed by no patch");
    else
      s.actions.push_back({action_kind::patch, std::move(patch)});
  }
  return s;
}

std::vector<action> response_actions(const script& s, std::size_t tool_outputs,
                                     const std::string& default_command) {
  std::vector<action> actions = s.actions;
  if (actions.empty()) actions.push_back({action_kind::run, default_command});
  // Response k carries everything after the k-th tool call through the (k+1)-th.
  std::size_t calls_seen = 0;
  std::vector<action> current;
  for (const auto& a : actions) {
    if (calls_seen == tool_outputs) current.push_back(a);
    if (is_tool_call(a.kind) && ++calls_seen > tool_outputs) return current;
  }
  return calls_seen == tool_outputs ? current : std::vector<action>{};
}

}  // namespace parley::mock_model
