#include "actors/model/config/mcp_servers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "actors/model/config/toml_reading.hpp"

namespace parley::model_config {

namespace {

// A timeout longer than a day is a mistake, not a wish.
constexpr double max_timeout_sec = 86'400;

/// Codex's timeouts are seconds, whole or not ("startup_timeout_sec = 2.5").
std::chrono::milliseconds read_seconds(const toml::node& n, const std::string& key) {
  double sec = 0;
  if (auto i = n.value_exact<int64_t>())
    sec = static_cast<double>(*i);
  else if (auto d = n.value_exact<double>())
    sec = *d;
  else
    detail::fail(&n, key, "expected a number of seconds, got " + detail::type_name(n));
  if (!(sec > 0) || sec > max_timeout_sec)
    detail::fail(&n, key, "expected more than 0 and at most 86400 seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(sec * 1000)));
}

mcp_server read_server(const std::string& name, const toml::node& node) {
  auto key = "mcp_servers." + name;
  const auto& t = detail::read_table(node, key);
  auto sub = [&](const char* field) { return key + "." + field; };
  mcp_server s;
  s.name = name;
  if (auto* n = t.get("command")) s.command = detail::read_string(*n, sub("command"));
  if (auto* n = t.get("args")) s.args = detail::read_string_array(*n, sub("args"));
  if (auto* n = t.get("env")) s.env = detail::read_string_table(*n, sub("env"));
  if (auto* n = t.get("env_vars")) s.env_vars = detail::read_string_array(*n, sub("env_vars"));
  if (auto* n = t.get("cwd")) s.cwd = detail::read_string(*n, sub("cwd"));
  if (auto* n = t.get("url")) s.url = detail::read_string(*n, sub("url"));
  if (auto* n = t.get("bearer_token_env_var"))
    s.bearer_token_env_var = detail::read_string(*n, sub("bearer_token_env_var"));
  if (auto* n = t.get("http_headers")) s.http_headers = detail::read_string_table(*n, sub("http_headers"));
  if (auto* n = t.get("env_http_headers"))
    s.env_http_headers = detail::read_string_table(*n, sub("env_http_headers"));
  if (auto* n = t.get("enabled")) s.enabled = detail::read_bool(*n, sub("enabled"));
  // Codex's older spelling in milliseconds; the seconds win when both are given.
  if (auto* n = t.get("startup_timeout_ms"))
    s.startup_timeout = std::chrono::milliseconds(
        static_cast<int64_t>(detail::read_positive(*n, sub("startup_timeout_ms"))));
  if (auto* n = t.get("startup_timeout_sec"))
    s.startup_timeout = read_seconds(*n, sub("startup_timeout_sec"));
  if (auto* n = t.get("tool_timeout_sec")) s.tool_timeout = read_seconds(*n, sub("tool_timeout_sec"));
  if (auto* n = t.get("enabled_tools"))
    s.enabled_tools = detail::read_string_array(*n, sub("enabled_tools"));
  if (auto* n = t.get("disabled_tools"))
    s.disabled_tools = detail::read_string_array(*n, sub("disabled_tools"));
  if (auto* n = t.get("tools")) {
    for (auto& [tool, table] : detail::read_table(*n, sub("tools"))) {
      auto tool_key = sub("tools") + "." + std::string{tool.str()};
      const auto& tt = detail::read_table(table, tool_key);
      auto* mode = tt.get("approval_mode");
      if (!mode) continue;
      auto value = detail::read_string(*mode, tool_key + ".approval_mode");
      if (value != "auto" && value != "prompt" && value != "approve")
        detail::fail(mode, tool_key + ".approval_mode",
                     "expected \"auto\", \"prompt\" or \"approve\", got \"" + value + "\"");
      s.tool_approval_modes[std::string{tool.str()}] = value;
    }
  }
  if (auto* n = t.get("sandbox_mode")) {
    auto mode = detail::read_string(*n, sub("sandbox_mode"));
    if (mode == "read-only")
      s.sandbox_mode = mcp_server::sandbox::read_only;
    else if (mode == "workspace-write")
      s.sandbox_mode = mcp_server::sandbox::workspace_write;
    else if (mode == "danger-full-access")
      s.sandbox_mode = mcp_server::sandbox::danger_full_access;
    else
      detail::fail(n, sub("sandbox_mode"),
                   "expected \"read-only\", \"workspace-write\" or \"danger-full-access\", got \""
                       + mode + "\"");
  }
  if (auto* n = t.get("sandbox_writable_roots")) {
    s.sandbox_writable_roots = detail::read_string_array(*n, sub("sandbox_writable_roots"));
    for (const auto& root : s.sandbox_writable_roots)
      if (root.empty() || root[0] != '/')
        detail::fail(n, sub("sandbox_writable_roots"),
                     "expected absolute paths, got \"" + root + "\"");
  }
  if (auto* n = t.get("sandbox_network")) s.sandbox_network = detail::read_bool(*n, sub("sandbox_network"));
  if (!s.command.empty() && !s.url.empty())
    detail::fail(&node, key, "give either `command` (stdio) or `url` (streamable HTTP), not both");
  if (s.command.empty() && s.url.empty())
    detail::fail(&node, key, "needs `command` (a stdio server) or `url` (streamable HTTP)");
  if (!s.url.empty() && s.url.rfind("http://", 0) != 0 && s.url.rfind("https://", 0) != 0)
    detail::fail(t.get("url"), sub("url"), "expected an http:// or https:// URL, got \"" + s.url + "\"");
  return s;
}

}  // namespace

bool mcp_server::tool_enabled(const std::string& tool) const {
  auto has = [&](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), tool) != names.end();
  };
  if (enabled_tools && !has(*enabled_tools)) return false;
  return !has(disabled_tools);
}

std::string mcp_server::approval_mode(const std::string& tool) const {
  auto i = tool_approval_modes.find(tool);
  return i == tool_approval_modes.end() ? "auto" : i->second;
}

bool operator==(const mcp_server& a, const mcp_server& b) {
  return a.name == b.name && a.command == b.command && a.args == b.args && a.env == b.env
         && a.env_vars == b.env_vars && a.cwd == b.cwd && a.url == b.url && a.enabled == b.enabled
         && a.startup_timeout == b.startup_timeout && a.tool_timeout == b.tool_timeout
         && a.enabled_tools == b.enabled_tools && a.disabled_tools == b.disabled_tools
         && a.sandbox_mode == b.sandbox_mode
         && a.sandbox_writable_roots == b.sandbox_writable_roots
         && a.sandbox_network == b.sandbox_network
         && a.bearer_token_env_var == b.bearer_token_env_var && a.http_headers == b.http_headers
         && a.env_http_headers == b.env_http_headers;
}

namespace detail {

mcp_servers read_mcp_servers(const toml::node& node) {
  mcp_servers out;
  for (auto& [name, value] : read_table(node, "mcp_servers")) {
    std::string id{name.str()};
    out.emplace(id, read_server(id, value));
  }
  return out;
}

}  // namespace detail

}  // namespace parley::model_config
