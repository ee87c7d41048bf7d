// hooks.json and the hook programs' answers. Both are parsed strictly: a typo
// in the configuration must stop the server (an ignored "timeout" or "hook"
// key would silently change who reviews what), and an answer that is not
// exactly right denies.

#include "actors/approval/hooks/external_hook.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

namespace parley::hooks {

namespace {

using nlohmann::json;

// Long enough for a human on the other end of a chat; short enough that a
// typo (minutes vs. milliseconds) is caught.
constexpr int64_t max_timeout_ms = 60 * 60 * 1000;

[[noreturn]] void malformed(const std::string& path, const std::string& where,
                            const std::string& what) {
  throw std::runtime_error(path + ": " + where + ": " + what);
}

std::optional<action_kind> action_named(const std::string& s) {
  for (auto k : {action_kind::command, action_kind::file_change, action_kind::tool})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

external_hook_spec parse_entry(const std::string& path, const std::string& where, const json& e,
                               std::set<std::string>& names) {
  if (!e.is_object()) malformed(path, where, "expected an object");
  for (const auto& [key, value] : e.items()) {
    (void)value;
    if (key != "name" && key != "command" && key != "timeoutMs" && key != "on")
      malformed(path, where, "unknown key \"" + key
                                 + "\" (expected name, command, timeoutMs, on)");
  }
  external_hook_spec spec;

  auto name = e.find("name");
  if (name == e.end() || !name->is_string() || name->get<std::string>().empty())
    malformed(path, where + ".name", "expected a non-empty string");
  spec.name = name->get<std::string>();
  if (!names.insert(spec.name).second)
    malformed(path, where + ".name", "duplicate hook name \"" + spec.name + "\"");

  auto command = e.find("command");
  if (command == e.end() || !command->is_array() || command->empty())
    malformed(path, where + ".command", "expected a non-empty array of strings (program and arguments)");
  for (const auto& word : *command) {
    if (!word.is_string()) malformed(path, where + ".command", "every element must be a string");
    spec.argv.push_back(word.get<std::string>());
  }
  if (spec.argv.front().empty()) malformed(path, where + ".command", "the program must not be empty");

  if (auto t = e.find("timeoutMs"); t != e.end()) {
    if (!t->is_number_integer() || t->get<int64_t>() <= 0 || t->get<int64_t>() > max_timeout_ms)
      malformed(path, where + ".timeoutMs",
                "expected an integer from 1 to " + std::to_string(max_timeout_ms));
    spec.timeout = std::chrono::milliseconds{t->get<int64_t>()};
  }

  if (auto on = e.find("on"); on != e.end()) {
    if (!on->is_array()) malformed(path, where + ".on", "expected an array of action kinds");
    for (const auto& k : *on) {
      auto kind = k.is_string() ? action_named(k.get<std::string>()) : std::nullopt;
      if (!kind)
        malformed(path, where + ".on",
                  "unknown action kind " + k.dump() + " (expected \"command\", \"fileChange\", \"tool\")");
      if (std::find(spec.on.begin(), spec.on.end(), *kind) == spec.on.end()) spec.on.push_back(*kind);
    }
  }
  return spec;
}

// A short, printable description of what a hook answered, for the reason.
std::string garbage(const std::string& name, const std::string& what) {
  return "hook " + name + " answered garbage: " + what;
}

}  // namespace

std::vector<external_hook_spec> load_external_hooks(const std::string& home) {
  const std::string path = home + "/hooks.json";
  // Only a file that is truly absent means "no hooks": a dangling symlink or
  // an unreadable file is a configured reviewer we cannot run.
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    malformed(path, "file", std::strerror(errno));
  }
  if (::stat(path.c_str(), &st) != 0) malformed(path, "file", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) malformed(path, "file", "not a regular file");
  std::ifstream in{path, std::ios::binary};
  if (!in) malformed(path, "file", "cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::exception& e) {
    malformed(path, "file", std::string{"not valid JSON: "} + e.what());
  }
  if (!doc.is_object()) malformed(path, "top level", "expected an object {\"hooks\": [...]}");
  for (const auto& [key, value] : doc.items()) {
    (void)value;
    if (key != "hooks") malformed(path, "top level", "unknown key \"" + key + "\" (expected hooks)");
  }
  auto hooks = doc.find("hooks");
  if (hooks == doc.end() || !hooks->is_array()) malformed(path, "hooks", "expected an array");
  std::vector<external_hook_spec> out;
  std::set<std::string> names;
  for (size_t i = 0; i < hooks->size(); ++i)
    out.push_back(parse_entry(path, "hooks[" + std::to_string(i) + "]", (*hooks)[i], names));
  return out;
}

verdict parse_hook_output(const std::string& name, const std::string& stdout_text) {
  auto first = stdout_text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return verdict::deny(garbage(name, "no output"));
  // json::parse accepts exactly one value plus surrounding whitespace, so two
  // objects (or trailing text) fail here as well.
  auto doc = json::parse(stdout_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return verdict::deny(garbage(name, "not exactly one JSON value"));
  if (!doc.is_object()) return verdict::deny(garbage(name, "not a JSON object"));
  auto decision = doc.find("decision");
  if (decision == doc.end() || !decision->is_string())
    return verdict::deny(garbage(name, "no \"decision\" string"));
  std::string reason;
  if (auto r = doc.find("reason"); r != doc.end() && !r->is_null()) {
    if (!r->is_string()) return verdict::deny(garbage(name, "\"reason\" is not a string"));
    reason = r->get<std::string>();
  }
  const auto& d = decision->get_ref<const std::string&>();
  if (d == "allow") return verdict::allow(std::move(reason));
  if (d == "deny") return verdict::deny(reason.empty() ? "denied by hook " + name : std::move(reason));
  if (d == "abstain") return verdict{verdict::kind::abstain, std::move(reason)};
  return verdict::deny(garbage(name, "unknown decision " + decision->dump()));
}

}  // namespace parley::hooks
