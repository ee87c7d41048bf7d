#include "actors/model/config/model_config.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "actors/model/config/toml_reading.hpp"

namespace parley::model_config {

namespace {

using detail::fail;

// Codex's caps on configured retries.
constexpr uint64_t max_retries = 100;
constexpr uint64_t max_request_cap = 65536;
constexpr uint64_t max_hold_release_ms = 86'400'000;  // a day
// Where a provider without base_url sends its requests (as Codex).
constexpr const char* default_base_url = "https://api.openai.com/v1";

provider http_provider(std::string id, std::string name, std::string base_url, wire_api wire) {
  provider p;
  p.id = std::move(id);
  p.name = std::move(name);
  p.base_url = std::move(base_url);
  p.wire = wire;
  return p;
}

void read_provider_fields(const toml::table& t, const std::string& key, provider& p) {
  auto at = [&](const char* field) { return t.get(field); };
  auto sub = [&](const char* field) { return key + "." + field; };
  if (auto* n = at("name")) p.name = detail::read_string(*n, sub("name"));
  if (auto* n = at("base_url")) {
    p.base_url = detail::read_string(*n, sub("base_url"));
    if (p.base_url.rfind("http://", 0) != 0 && p.base_url.rfind("https://", 0) != 0)
      fail(n, sub("base_url"), "expected an http:// or https:// URL, got \"" + p.base_url + "\"");
  }
  if (auto* n = at("env_key")) p.env_key = detail::read_string(*n, sub("env_key"));
  if (auto* n = at("wire_api"))
    p.wire = detail::read_choice<wire_api>(*n, sub("wire_api"),
                                           {{"responses", wire_api::responses},
                                            {"chat", wire_api::chat}});
  if (auto* n = at("http_headers")) p.http_headers = detail::read_string_table(*n, sub("http_headers"));
  if (auto* n = at("env_http_headers"))
    p.env_http_headers = detail::read_string_table(*n, sub("env_http_headers"));
  if (auto* n = at("query_params")) p.query_params = detail::read_string_table(*n, sub("query_params"));
  if (auto* n = at("request_max_retries"))
    p.request_max_retries = detail::read_count(*n, sub("request_max_retries"), max_retries);
  if (auto* n = at("stream_max_retries"))
    p.stream_max_retries = detail::read_count(*n, sub("stream_max_retries"), max_retries);
  if (auto* n = at("stream_idle_timeout_ms"))
    p.stream_idle_timeout = std::chrono::milliseconds(
        static_cast<int64_t>(detail::read_positive(*n, sub("stream_idle_timeout_ms"))));
  if (auto* n = at("max_concurrent_requests"))
    p.max_concurrent_requests =
        detail::read_count(*n, sub("max_concurrent_requests"), max_request_cap);
  if (auto* n = at("stream_hold_release_ms"))
    p.stream_hold_release = std::chrono::milliseconds(static_cast<int64_t>(
        detail::read_count(*n, sub("stream_hold_release_ms"), max_hold_release_ms)));
}

void read_providers(const toml::node& node, settings& s) {
  for (auto& [name, value] : detail::read_table(node, "model_providers")) {
    std::string id{name.str()};
    auto key = "model_providers." + id;
    const auto& t = detail::read_table(value, key);
    auto it = s.providers.find(id);
    if (it == s.providers.end())
      it = s.providers.emplace(id, http_provider(id, id, default_base_url, wire_api::responses))
               .first;
    read_provider_fields(t, key, it->second);
  }
}

void read_shell_policy(const toml::node& node, shell_environment_policy& policy) {
  const std::string key = "shell_environment_policy";
  const auto& t = detail::read_table(node, key);
  if (auto* n = t.get("inherit"))
    policy.inherit = detail::read_choice<inherit_kind>(
        *n, key + ".inherit",
        {{"all", inherit_kind::all}, {"core", inherit_kind::core}, {"none", inherit_kind::none}});
  if (auto* n = t.get("ignore_default_excludes"))
    policy.ignore_default_excludes = detail::read_bool(*n, key + ".ignore_default_excludes");
  if (auto* n = t.get("exclude")) policy.exclude = detail::read_string_array(*n, key + ".exclude");
  if (auto* n = t.get("set")) policy.set = detail::read_string_table(*n, key + ".set");
  if (auto* n = t.get("include_only"))
    policy.include_only = detail::read_string_array(*n, key + ".include_only");
}

std::string choice(const toml::node& n, const std::string& key,
                   const std::vector<std::string>& allowed) {
  std::vector<std::pair<std::string, std::string>> choices;
  for (auto& a : allowed) choices.emplace_back(a, a);
  return detail::read_choice<std::string>(n, key, choices);
}

/// The active provider by the rule in the header.
void choose_provider(const toml::table& root, settings& s) {
  if (auto* n = root.get("model_provider")) {
    s.model_provider = detail::read_string(*n, "model_provider");
    if (!s.providers.count(s.model_provider)) {
      std::string known;
      for (auto& [id, p] : s.providers) known += (known.empty() ? "" : ", ") + id;
      fail(n, "model_provider",
           "no provider \"" + s.model_provider + "\" (defined: " + known + "; add [model_providers."
               + s.model_provider + "])");
    }
  } else {
    s.model_provider = s.model.empty() ? "scripted" : "openai";
  }
  const auto& active = s.active_provider();
  if (active.how == provider::kind::http && s.model.empty())
    fail(nullptr, "model",
         "not set; provider \"" + active.id + "\" needs the name of the model to ask");
}

/// `[parley.limits]`: each value a non-negative integer (0 = no limit).
void read_limits(const toml::node& node, std::map<std::string, uint64_t>& limits) {
  const auto& table = detail::read_table(node, "parley.limits");
  constexpr uint64_t cap = uint64_t{1} << 40;
  for (const auto& [key, value] : table) {
    std::string name{key.str()};
    limits[name] = detail::read_count(value, "parley.limits." + name, cap);
  }
}

settings read_settings(const toml::table& root, const std::string& source) {
  settings s;
  s.source = source;
  s.providers = built_in_providers();
  auto str = [&](const char* key, std::string& out) {
    if (auto* n = root.get(key)) out = detail::read_string(*n, key);
  };
  str("model", s.model);
  str("instructions", s.instructions);
  str("developer_instructions", s.developer_instructions);
  if (auto* n = root.get("model_reasoning_effort"))
    s.model_reasoning_effort = choice(*n, "model_reasoning_effort",
                                      {"none", "minimal", "low", "medium", "high", "xhigh"});
  if (auto* n = root.get("model_reasoning_summary"))
    s.model_reasoning_summary
        = choice(*n, "model_reasoning_summary", {"auto", "concise", "detailed", "none"});
  if (auto* n = root.get("model_auto_compact_token_limit"))
    s.auto_compact_token_limit = detail::read_positive(*n, "model_auto_compact_token_limit");
  if (auto* n = root.get("tool_output_token_limit"))
    // 0 is taken as not set (Codex would send the model only the marker).
    s.tool_output_token_limit = detail::read_count(*n, "tool_output_token_limit", 1ull << 40);
  if (auto* n = root.get("model_providers")) read_providers(*n, s);
  if (auto* n = root.get("shell_environment_policy")) read_shell_policy(*n, s.shell_environment);
  if (auto* f = root.get("features"); f && f->is_table()) {
    const auto& features = *f->as_table();
    if (auto* n = features.get("default_mode_request_user_input"))
      s.request_user_input_tool = detail::read_bool(*n, "features.default_mode_request_user_input");
    if (auto* n = features.get("request_permissions_tool"))
      s.request_permissions_tool = detail::read_bool(*n, "features.request_permissions_tool");
  }
  if (auto* n = root.get("mcp_servers")) s.mcp = detail::read_mcp_servers(*n);
  if (auto* p = root.get("parley")) {
    const auto& parley = detail::read_table(*p, "parley");
    if (auto* n = parley.get("limits")) read_limits(*n, s.limits);
  }
  choose_provider(root, s);
  return s;
}

}  // namespace

const char* to_string(wire_api w) {
  return w == wire_api::chat ? "chat" : "responses";
}

std::map<std::string, provider> built_in_providers() {
  std::map<std::string, provider> all;
  auto openai = http_provider("openai", "OpenAI", default_base_url, wire_api::responses);
  openai.env_key = "OPENAI_API_KEY";
  openai.env_http_headers = {{"OpenAI-Organization", "OPENAI_ORGANIZATION"},
                             {"OpenAI-Project", "OPENAI_PROJECT"}};
  all.emplace("openai", std::move(openai));
  // The open-source servers, on their usual local ports.
  all.emplace("ollama",
              http_provider("ollama", "gpt-oss", "http://localhost:11434/v1", wire_api::chat));
  all.emplace("lmstudio",
              http_provider("lmstudio", "gpt-oss", "http://localhost:1234/v1", wire_api::responses));
  provider scripted;
  scripted.how = provider::kind::scripted;
  scripted.id = "scripted";
  scripted.name = "parley scripted model";
  all.emplace("scripted", std::move(scripted));
  return all;
}

load_result parse(std::string_view toml_text, const std::string& source_name,
                  const std::vector<std::string>& overrides) {
  load_result out;
  try {
    toml::table root;
    try {
      root = toml::parse(toml_text, source_name);
    } catch (const toml::parse_error& e) {
      const auto& at = e.source().begin;
      out.error = source_name + ":" + std::to_string(at.line) + ":" + std::to_string(at.column)
                  + ": " + std::string{e.description()};
      return out;
    }
    for (auto& text : overrides) detail::apply_override(root, text);
    out.config = read_settings(root, source_name);
  } catch (const detail::config_problem& e) {
    out.error = e.what();
  }
  return out;
}

load_result load(const load_request& request) {
  std::ifstream in{request.path, std::ios::binary};
  if (!in) {
    auto why = errno;
    if (why == ENOENT && !request.explicit_path) return parse("", "", request.overrides);
    load_result out;
    out.error = "cannot read config file " + request.path + ": " + std::strerror(why);
    return out;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), request.path, request.overrides);
}

std::string default_config_path(const char* codex_home, const std::string& parley_home) {
  if (codex_home && *codex_home) return std::string{codex_home} + "/config.toml";
  return parley_home + "/config.toml";
}

bool is_loopback_url(std::string_view url) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (url.substr(0, scheme.size()) != scheme) continue;
    auto rest = url.substr(scheme.size());
    auto end = rest.find_first_of("/?#");
    auto authority = rest.substr(0, end);
    if (auto at = authority.rfind('@'); at != std::string_view::npos)
      authority.remove_prefix(at + 1);
    if (authority.substr(0, 5) == "[::1]") return true;
    auto host = authority.substr(0, authority.find(':'));
    return host == "localhost" || host.substr(0, 4) == "127.";
  }
  return false;
}

uint64_t request_cap(const provider& p) {
  if (p.max_concurrent_requests) return *p.max_concurrent_requests;
  return is_loopback_url(p.base_url) ? default_local_request_cap : default_remote_request_cap;
}

}  // namespace parley::model_config
