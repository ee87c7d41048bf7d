// Configuration and discovery methods of a session: config/value/write and
// config/batchWrite (Codex's config.toml, written by a job off the
// scheduler), modelProvider/*, permissionProfile/list, experimentalFeature/*
// and hooks/list, each answered from what parley has: its config.toml as
// read at start, its sandbox modes, its approval hooks. A write changes the
// file; parley reads it at its next start (the README says so).

#include <cctype>
#include <filesystem>
#include <utility>

#include "actors/approval/hooks/approval_hook.hpp"
#include "actors/approval/audit/sha256.hpp"
#include "actors/core/log.hpp"
#include "actors/model/config/config_write.hpp"
#include "actors/model/config/model_config.hpp"
#include "protocol/json_codec.hpp"
#include "transport/rpc_session.hpp"

namespace parley::rpc {

using protocol::json;

namespace config_methods_detail {

namespace mc = model_config;

/// Params that do not fit: -32600 with Codex's "Invalid request: ..." text.
struct bad_params {
  std::string message;
};

template <class F>
auto decoding(F f) {
  try {
    return f();
  } catch (const protocol::decode_error& e) {
    throw bad_params{std::string{"Invalid request: "} + e.what()};
  }
}

const json& object_params(const json& p) {
  if (!p.is_null() && !p.is_object())
    throw bad_params{"Invalid request: invalid type: " + protocol::describe_value(p)
                     + ", expected a map"};
  static const json empty = json::object();
  return p.is_null() ? empty : p;
}

std::string absolute(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return (ec ? std::filesystem::path(path) : p).lexically_normal().string();
}

mc::config_edit edit_of(const json& e) {
  if (!e.is_object())
    throw bad_params{"Invalid request: invalid type: " + protocol::describe_value(e)
                     + ", expected struct ConfigEdit"};
  mc::config_edit edit;
  edit.key_path = decoding([&] { return protocol::required<std::string>(e, "keyPath"); });
  auto v = e.find("value");
  if (v == e.end()) throw bad_params{"Invalid request: missing field `value`"};
  edit.value = *v;
  auto strategy = decoding([&] { return protocol::required<std::string>(e, "mergeStrategy"); });
  if (strategy != "replace" && strategy != "upsert")
    throw bad_params{"Invalid request: unknown variant `" + strategy
                     + "`, expected `replace` or `upsert`"};
  edit.upsert = strategy == "upsert";
  return edit;
}

bool built_in(const std::string& id) {
  return mc::built_in_providers().count(id) > 0;
}

/// A provider as modelProvider/list shows it (never a key or a header value).
json provider_summary(const mc::provider& p) {
  json settings;
  if (p.id == "openai") {
    settings = {{"type", "openai"}};
  } else {
    json auth = p.env_key.empty() ? json{{"mode", "none"}}
                                  : json{{"mode", "environmentVariable"}, {"envKey", p.env_key}};
    settings = {{"type", "customGateway"}, {"auth", auth}};
  }
  bool http = p.how == mc::provider::kind::http;
  return json{{"id", p.id},
              {"name", p.name.empty() ? p.id : p.name},
              {"canEdit", !built_in(p.id)},
              {"baseUrl", http && !p.base_url.empty() ? json(p.base_url) : json(nullptr)},
              {"settings", settings}};
}

/// parley's sandbox modes as Codex's built-in permission profiles.
json permission_profiles() {
  return json::array(
      {{{"id", ":read-only"},
        {"description", "commands read the workspace and write nothing (parley-sandbox)"},
        {"allowed", true}},
       {{"id", ":workspace"},
        {"description", "commands write inside the thread's cwd and writable roots only"},
        {"allowed", true}},
       {{"id", ":danger-full-access"},
        {"description", "commands run unconfined"},
        {"allowed", true}}});
}

/// A page of `all` from a numeric cursor (an index, as Codex's).
json page_of(const json& all, const json& p) {
  size_t start = 0;
  if (auto c = decoding([&] { return protocol::optional<std::string>(p, "cursor"); })) {
    try {
      size_t used = 0;
      start = std::stoul(*c, &used);
      if (used != c->size()) throw std::invalid_argument("cursor");
    } catch (const std::exception&) {
      throw bad_params{"invalid cursor: " + *c};
    }
  }
  auto limit = decoding([&] { return protocol::optional<uint32_t>(p, "limit"); });
  size_t n = limit && *limit > 0 ? *limit : all.size();
  json data = json::array();
  for (size_t i = start; i < all.size() && data.size() < n; ++i) data.push_back(all[i]);
  auto end = start + data.size();
  return json{{"data", data},
              {"nextCursor", end < all.size() ? json(std::to_string(end)) : json(nullptr)}};
}

std::string hex_digest(const std::string& text) {
  audit::sha256 h;
  h.update(text);
  auto d = h.finish();
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (auto b : d) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

/// parley's approval hook programs (HOME/hooks.json) as Codex's hook
/// metadata: each reviews permission requests (approvals).
json hook_entries(const runtime_config& cfg) {
  json hooks = json::array();
  int64_t order = 0;
  auto source = absolute(cfg.home + "/hooks.json");
  for (const auto& h : cfg.external_hooks) {
    std::string command;
    for (const auto& a : h.argv) command += (command.empty() ? "" : " ") + a;
    hooks.push_back({{"handlerType", "command"},
                     {"command", command},
                     {"async", false},
                     {"key", h.name},
                     {"eventName", "permissionRequest"},
                     {"matcher", nullptr},
                     {"enabled", true},
                     {"isManaged", false},
                     {"source", "user"},
                     {"sourcePath", source},
                     {"pluginId", nullptr},
                     {"environmentId", nullptr},
                     {"statusMessage", nullptr},
                     {"additionalContextLimit", nullptr},
                     {"timeoutSec", (h.timeout.count() + 999) / 1000},
                     {"trustStatus", "trusted"},
                     {"displayOrder", order++},
                     {"currentHash", "sha256:" + hex_digest(h.name + "\n" + command)}});
  }
  return hooks;
}

json hook_warnings(const runtime_config& cfg) {
  json warnings = json::array();
  if (!cfg.hooks.empty())
    warnings.push_back(std::to_string(cfg.hooks.size())
                       + " in-process approval hook(s) registered by the host are not listed");
  return warnings;
}

}  // namespace config_methods_detail

void session::reply_config_error(const protocol::request_id& id, const std::string& code,
                                 const std::string& message) {
  write(protocol::dump_line(json{
      {"id", id},
      {"error",
       {{"code", protocol::rpc_code::invalid_request},
        {"message", message},
        {"data", {{"config_write_error_code", code}}}}}}));
}

void session::config_method(const std::string& method, const protocol::request_id& id,
                            const json& params) {
  using namespace config_methods_detail;
  try {
    const auto& p = object_params(params);
    const auto* cfg = config_.runtime.get();
    if (method == "config/value/write" || method == "config/batchWrite") {
      std::vector<mc::config_edit> edits;
      if (method == "config/value/write") {
        edits.push_back(edit_of(p));
      } else {
        auto list = p.find("edits");
        if (list == p.end() || list->is_null())
          throw bad_params{"Invalid request: missing field `edits`"};
        if (!list->is_array())
          throw bad_params{"Invalid request: invalid type: " + protocol::describe_value(*list)
                           + ", expected a sequence"};
        for (const auto& e : *list) edits.push_back(edit_of(e));
      }
      auto expected = decoding([&] { return protocol::optional<std::string>(p, "expectedVersion"); });
      auto file = decoding([&] { return protocol::optional<std::string>(p, "filePath"); });
      decoding([&] { return protocol::optional<bool>(p, "reloadUserConfig"); });
      return write_config(id, std::move(edits), expected, file);
    }
    if (method == "modelProvider/list") {
      json data = json::array();
      std::string active = cfg ? cfg->model_provider : "parley";
      if (cfg && cfg->model_settings) {
        for (const auto& entry : cfg->model_settings->providers)
          data.push_back(provider_summary(entry.second));
        active = cfg->model_settings->model_provider;
      }
      // A provider chosen in config.toml (model_provider) is used from the next start.
      return reply(id, json{{"data", data}, {"defaultProviderId", active},
                              {"canChangeDefault", true}});
    }
    if (method == "modelProvider/capabilities/read") {
      // parley offers the model no image generation and no web search tool.
      return reply(id, json{{"imageGeneration", false}, {"webSearch", false}});
    }
    if (method == "permissionProfile/list") {
      decoding([&] { return protocol::optional<std::string>(p, "cwd"); });
      return reply(id, page_of(permission_profiles(), p));
    }
    if (method == "experimentalFeature/list") {
      decoding([&] { return protocol::optional<std::string>(p, "threadId"); });
      // parley has no experimental feature flags.
      return reply(id, page_of(json::array(), p));
    }
    if (method == "experimentalFeature/enablement/set") {
      auto e = p.find("enablement");
      if (e == p.end() || e->is_null())
        throw bad_params{"Invalid request: missing field `enablement`"};
      if (!e->is_object())
        throw bad_params{"Invalid request: invalid type: " + protocol::describe_value(*e)
                         + ", expected a map"};
      for (const auto& [name, on] : e->items())
        if (!on.is_boolean())
          throw bad_params{"Invalid request: invalid type: " + protocol::describe_value(on)
                           + ", expected a boolean"};
      // No feature of parley's is named: nothing is updated (as Codex
      // answers for names it does not know).
      return reply(id, json{{"enablement", json::object()}});
    }
    if (method == "hooks/list") return hooks_list(id, p);
    if (method == "modelProvider/config/write") return provider_config_write(id, p);
  } catch (const bad_params& e) {
    return reply_error(id, protocol::rpc_code::invalid_request, e.message);
  }
  reply_error(id, protocol::rpc_code::method_not_found, "method not found: " + method);
}

void session::hooks_list(const protocol::request_id& id, const json& p) {
  using namespace config_methods_detail;
  auto cwds = decoding([&] {
    return protocol::optional<std::vector<std::string>>(p, "cwds").value_or(
        std::vector<std::string>{});
  });
  auto thread = decoding([&] { return protocol::optional<std::string>(p, "threadId"); });
  auto answer = [this, id](const std::vector<std::string>& dirs) {
    json data = json::array();
    static const runtime_config none;
    const auto& cfg = config_.runtime ? *config_.runtime : none;
    for (const auto& d : dirs)
      data.push_back({{"cwd", d},
                      {"hooks", hook_entries(cfg)},
                      {"warnings", hook_warnings(cfg)},
                      {"errors", json::array()}});
    reply(id, json{{"data", data}});
  };
  if (!thread) {
    if (cwds.empty()) cwds.push_back(config_.default_cwd);
    return answer(cwds);
  }
  // A thread's hooks: parley's are the server's, shown for its cwd.
  runtime_.thread_read(
      protocol::thread_read_params{*thread, false},
      [this, alive = std::weak_ptr<bool>(alive_), id, tid = *thread,
       answer](caf::expected<protocol::thread_read_response> r) {
        if (alive.expired()) return;
        if (!r) return reply_error(id, protocol::rpc_code::invalid_request, "thread not found: " + tid);
        answer({r->thread_.cwd});
      });
}

void session::write_config(const protocol::request_id& id,
                           std::vector<model_config::config_edit> edits,
                           std::optional<std::string> expected, std::optional<std::string> file,
                           std::function<void(const std::string& version)> then) {
  using namespace config_methods_detail;
  auto path = config_.runtime ? config_.runtime->config_file : std::string{};
  if (path.empty())
    return reply_error(id, protocol::rpc_code::internal_error,
                       "this server has no config.toml to write");
  path = absolute(path);
  if (file && absolute(*file) != path)
    return reply_config_error(id, mc::to_string(mc::write_error::layer_readonly),
                              "Only writes to the user config are allowed");
  if (!config_.files)
    return reply_error(id, protocol::rpc_code::internal_error,
                       "config writes are not available on this connection");
  auto done = [this, alive = std::weak_ptr<bool>(alive_), id, path, then](files::answer a) {
    if (alive.expired()) return;
    auto* j = std::get_if<json>(&a);
    if (!j) {
      auto& f = std::get<files::failure>(a);
      return reply_error(id, f.code, f.message);
    }
    if (j->contains("error"))
      return reply_config_error(id, (*j)["code"].get<std::string>(),
                                (*j)["error"].get<std::string>());
    auto version = (*j)["version"].get<std::string>();
    PARLEY_INFO("config event=written path={} version={} (applies at the next start)", path,
                version);
    if (then) return then(version);
    reply(id, json{{"status", "ok"},
                   {"version", version},
                   {"filePath", path},
                   {"overriddenMetadata", nullptr}});
  };
  config_.files->run({[path, edits = std::move(edits), expected]() -> files::answer {
                       auto r = mc::write_config(path, edits, expected, [](const std::string& text) {
                         return "sha256:" + hex_digest(text);  // Codex's version
                       });
                       if (!r) return json{{"error", r.message}, {"code", mc::to_string(r.error)}};
                       return json{{"version", r.version}};
                     }},
                     done);
}

void session::provider_config_write(const protocol::request_id& id, const json& p) {
  using namespace config_methods_detail;
  auto s = p.find("settings");
  if (s == p.end() || s->is_null()) throw bad_params{"Invalid request: missing field `settings`"};
  if (!s->is_object())
    throw bad_params{"Invalid request: invalid type: " + protocol::describe_value(*s)
                     + ", expected a map"};
  auto type = decoding([&] { return protocol::required<std::string>(*s, "type"); });
  if (type == "bedrock" || type == "gcp")
    return reply_error(id, protocol::rpc_code::invalid_request,
                       "parley has no " + std::string{type == "bedrock" ? "Bedrock" : "GCP"}
                           + " model provider; configure a customGateway (an HTTP endpoint)");
  if (type != "customGateway")
    throw bad_params{"Invalid request: unknown variant `" + type
                     + "`, expected one of `customGateway`, `bedrock`, `gcp`"};
  auto pid_or_name = decoding([&] { return protocol::optional<std::string>(*s, "providerId"); });
  auto name = decoding([&] { return protocol::optional<std::string>(*s, "name"); });
  if (!pid_or_name) {
    // A new provider: an id made from its name (or "custom"), not yet taken.
    std::string base;
    for (char ch : name.value_or("custom"))
      base += std::isalnum(static_cast<unsigned char>(ch))
                  ? static_cast<char>(std::tolower(static_cast<unsigned char>(ch)))
                  : '-';
    if (base.empty()) base = "custom";
    pid_or_name = base;
    const auto* settings = config_.runtime ? config_.runtime->model_settings.get() : nullptr;
    for (int n = 2; settings && settings->providers.count(*pid_or_name); ++n) pid_or_name = base + "-" + std::to_string(n);
  }
  if (built_in(*pid_or_name))
    return reply_error(id, protocol::rpc_code::invalid_request,
                       "model provider `" + *pid_or_name + "` is built in and cannot be edited");
  std::vector<mc::config_edit> edits;
  auto key = "model_providers." + *pid_or_name;
  if (name) edits.push_back({key + ".name", *name, false});
  for (auto [field, toml_key] : {std::pair{"baseUrl", "base_url"}, std::pair{"envKey", "env_key"}})
    if (s->contains(field)) {
      const auto& v = (*s)[field];
      if (!v.is_null() && !v.is_string())
        throw bad_params{std::string{"Invalid request: invalid type: "}
                         + protocol::describe_value(v) + ", expected a string"};
      edits.push_back({key + "." + toml_key, v, false});
    }
  if (edits.empty()) edits.push_back({key, json::object(), true});
  write_config(id, std::move(edits), std::nullopt, std::nullopt,
               [this, id, pid = *pid_or_name, name, s = *s](const std::string&) {
                 mc::provider shown;
                 shown.id = pid;
                 shown.name = name.value_or(pid);
                 if (s.contains("baseUrl") && s["baseUrl"].is_string())
                   shown.base_url = s["baseUrl"].get<std::string>();
                 if (s.contains("envKey") && s["envKey"].is_string())
                   shown.env_key = s["envKey"].get<std::string>();
                 reply(id, json{{"provider", provider_summary(shown)}});
               });
}

}  // namespace parley::rpc
