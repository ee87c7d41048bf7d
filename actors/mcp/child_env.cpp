#include "actors/mcp/child_env.hpp"

#include <algorithm>
#include <map>

namespace parley::mcp {

const std::vector<std::string>& inherited_variables() {
  static const std::vector<std::string> names{"HOME", "LOGNAME", "PATH", "SHELL", "USER",
                                              "LANG", "LC_ALL",  "TERM", "TMPDIR", "TZ"};
  return names;
}

std::vector<std::string> child_environment(const model_config::mcp_server& server,
                                           const std::vector<std::string>& parent) {
  std::map<std::string, std::string> from_parent;
  for (const auto& line : parent) {
    auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    from_parent.emplace(line.substr(0, eq), line.substr(eq + 1));
  }
  std::map<std::string, std::string> env;
  auto pass = [&](const std::string& name) {
    if (auto it = from_parent.find(name); it != from_parent.end()) env[name] = it->second;
  };
  for (const auto& name : inherited_variables()) pass(name);
  for (const auto& name : server.env_vars) pass(name);
  for (const auto& [name, value] : server.env) env[name] = value;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace parley::mcp
