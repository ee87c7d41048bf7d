#include "actors/model/config/environment_policy.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <set>

namespace parley::model_config {

namespace {

// What `inherit = "core"` keeps (Codex's list for Unix).
constexpr std::array<std::string_view, 9> core_names{"HOME", "LOGNAME", "PATH",   "SHELL", "USER",
                                                     "USERNAME", "TMPDIR", "TEMP", "TMP"};
constexpr std::array<std::string_view, 3> default_excludes{"*KEY*", "*SECRET*", "*TOKEN*"};

bool same_letter(char a, char b) {
  return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
}

template <class Patterns>
bool matches_any(const Patterns& globs, std::string_view name) {
  return std::any_of(globs.begin(), globs.end(),
                     [name](const auto& g) { return env_name_matches(g, name); });
}

struct entry {
  std::string name;
  std::string value;
};

}  // namespace

bool env_name_matches(std::string_view glob, std::string_view name) {
  // Iterative matching with one backtrack point: the last `*` seen and the
  // name position it currently stands for. Linear in practice, never
  // exponential.
  size_t g = 0, n = 0;
  std::optional<size_t> star;
  size_t star_n = 0;
  while (n < name.size()) {
    if (g < glob.size() && glob[g] == '*') {
      star = g++;
      star_n = n;
    } else if (g < glob.size() && (glob[g] == '?' || same_letter(glob[g], name[n]))) {
      ++g;
      ++n;
    } else if (star) {
      g = *star + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

std::vector<std::string> command_environment(const shell_environment_policy& policy,
                                             const std::vector<std::string>& parent) {
  std::vector<entry> env;
  std::set<std::string, std::less<>> seen;
  if (policy.inherit != inherit_kind::none) {
    for (const auto& line : parent) {
      auto eq = line.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      auto name = line.substr(0, eq);
      if (!seen.insert(name).second) continue;
      if (policy.inherit == inherit_kind::core
          && std::find(core_names.begin(), core_names.end(), name) == core_names.end())
        continue;
      env.push_back({std::move(name), line.substr(eq + 1)});
    }
  }
  auto drop = [&env](auto&& pred) {
    env.erase(std::remove_if(env.begin(), env.end(), pred), env.end());
  };
  if (!policy.ignore_default_excludes)
    drop([](const entry& e) { return matches_any(default_excludes, e.name); });
  if (!policy.exclude.empty())
    drop([&](const entry& e) { return matches_any(policy.exclude, e.name); });
  for (const auto& [name, value] : policy.set) {
    auto it = std::find_if(env.begin(), env.end(), [&](const entry& e) { return e.name == name; });
    if (it != env.end())
      it->value = value;
    else
      env.push_back({name, value});
  }
  if (!policy.include_only.empty())
    drop([&](const entry& e) { return !matches_any(policy.include_only, e.name); });
  std::vector<std::string> out;
  out.reserve(env.size());
  for (auto& e : env) out.push_back(e.name + "=" + e.value);
  return out;
}

std::vector<std::string> environment_of(const char* const* envp) {
  std::vector<std::string> out;
  for (; envp && *envp; ++envp) out.emplace_back(*envp);
  return out;
}

}  // namespace parley::model_config
