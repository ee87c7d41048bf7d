#include "actors/mcp/mcp_hub.hpp"

#include <unistd.h>  // environ

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <utility>

#include "actors/core/atoms.hpp"
#include "actors/core/errors.hpp"
#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "actors/mcp/framing.hpp"
#include "actors/mcp/http_link.hpp"
#include "actors/mcp/mcp_server.hpp"
#include "actors/mcp/messages.hpp"
#include "actors/mcp/tool_names.hpp"
#include "actors/model/config/config_write.hpp"
#include "actors/model/config/model_config.hpp"


namespace parley::mcp {

namespace hub_impl {

struct entry {
  model_config::mcp_server config;
  /// Invalid for a server parley does not run (disabled, or a url).
  caf::actor actor;
  json status;
  /// The server's instructions: its namespace tool's description.
  std::string instructions;
};

struct hub_state {
  static inline const char* name = "mcp_hub";
  hub_options options;
  std::map<std::string, entry> servers;
  /// Streamable-HTTP servers' client; null until one is configured.
  std::shared_ptr<http::client> http;
  /// Connections told of each startup state change.
  std::map<caf::actor_addr, caf::actor> subscribers;
  /// The tools offered to models (mcp_port's JSON) and their generation.
  std::string offer = "[]";
  uint64_t offer_generation = 0;
};

using self_ptr = caf::stateful_actor<hub_state>*;

/// A server's startup state in McpServerStartupState's words, from its
/// runtimeStatus; empty for one that has none (disabled).
std::string startup_state(const std::string& runtime_status) {
  if (runtime_status == "starting") return "starting";
  if (runtime_status == "connected") return "ready";
  if (runtime_status == "failed") return "failed";
  return {};
}

/// mcpServer/startupStatus/updated to every subscribed connection.
void announce(self_ptr self, const std::string& name, const std::string& state,
              const json& error) {
  if (state.empty() || self->state.subscribers.empty()) return;
  json params = {{"name", name},
                 {"status", state},
                 {"error", error.is_string() ? error : json()},
                 {"failureReason", nullptr},
                 {"threadId", nullptr}};
  auto text = params.dump(-1, ' ', false, json::error_handler_t::replace);
  for (auto& [addr, who] : self->state.subscribers) self->send(who, atom::startup::value, text);
}

json base_status(const model_config::mcp_server& s, const char* runtime_status) {
  return {{"name", s.name},
          {"authStatus", "unsupported"},
          {"tools", json::object()},
          {"resources", json::array()},
          {"resourceTemplates", json::array()},
          {"runtimeStatus", runtime_status},
          {"serverInfo", nullptr},
          {"toolsError", nullptr},
          {"httpOrigin", s.is_stdio() ? json() : json(origin_of(s.url))}};
}

/// The tools of every connected server, named for the model: a turn offers
/// them with its other tools, one namespace tool per server (in the order
/// of the entries, which is qualify_tools'), and finds a model's call by
/// its flat `name`.
json offered_tools(self_ptr self) {
  std::vector<raw_tool> raw;
  std::map<std::pair<std::string, std::string>, const json*> listed;
  for (auto& [name, e] : self->state.servers) {
    if (!e.actor || e.status.value("runtimeStatus", json()) != "connected") continue;
    const auto& tools = e.status.value("tools", json::object());
    if (!tools.is_object()) continue;
    for (auto it = tools.begin(); it != tools.end(); ++it) {
      raw.push_back({name, it.key()});
      listed[{name, it.key()}] = &e.status["tools"][it.key()];
    }
  }
  json out = json::array();
  for (auto& t : qualify_tools(raw)) {
    const auto& config = self->state.servers[t.server].config;
    // Long enough for a call that waits for a restart, then runs.
    auto deadline = config.tool_timeout + config.startup_timeout + std::chrono::seconds(5);
    const auto& listed_tool = *listed[{t.server, t.tool}];
    // What a turn needs to decide whether a call asks a person first, and
    // to show what it asks about (protocol/mcp_tool_approval.hpp).
    auto text_of = [&](const char* key) {
      auto i = listed_tool.find(key);
      return i != listed_tool.end() && i->is_string() ? i->get<std::string>() : std::string{};
    };
    auto annotations = listed_tool.value("annotations", json());
    out.push_back({{"name", t.name},
                   {"namespace", t.ns},
                   // The server's namespace tool without its tools: the
                   // turn gathers the server's functions into it.
                   {"namespaceTool", namespace_tool(t.ns, self->state.servers[t.server].instructions,
                                                    json::array())},
                   {"server", t.server},
                   {"tool", t.tool},
                   {"deadlineMs", deadline.count()},
                   {"annotations", annotations.is_object() ? annotations : json()},
                   {"title", text_of("title")},
                   {"description", text_of("description")},
                   {"approvalMode", config.approval_mode(t.tool)},
                   {"function", function_tool(t.callable, listed_tool)}});
  }
  return out;
}

/// After any change of the servers: a new generation when the tools
/// offered changed, so turns ask for them again.
void refresh_offer(self_ptr self) {
  auto offer = offered_tools(self).dump(-1, ' ', false, json::error_handler_t::replace);
  auto& st = self->state;
  if (offer == st.offer) return;
  st.offer = std::move(offer);
  ++st.offer_generation;
  if (st.options.tools_generation) st.options.tools_generation->store(st.offer_generation);
  PARLEY_INFO("mcp event=tools_offered generation={} bytes={}", st.offer_generation,
              st.offer.size());
}

void start_server(self_ptr self, const model_config::mcp_server& config) {
  auto& e = self->state.servers[config.name];
  e.config = config;
  e.actor = caf::actor{};
  if (!config.enabled) {
    e.status = base_status(config, "disabled");
    PARLEY_INFO("mcp event=disabled server={}", config.name);
    return;
  }
  if (!config.is_stdio() && !self->state.http) {
    // One HTTP client (its own I/O thread) for every streamable-HTTP server,
    // made when the first is configured.
    try {
      self->state.http = std::make_shared<http::client>();
    } catch (const std::exception& ex) {
      e.status = base_status(config, "failed");
      e.status["toolsError"] = std::string{"parley's HTTP client cannot start: "} + ex.what();
      PARLEY_ERROR("mcp event=http_client_failed server={} error=\"{}\"", config.name, ex.what());
      announce(self, config.name, "failed", e.status["toolsError"]);
      return;
    }
  }
  e.status = base_status(config, "starting");
  announce(self, config.name, "starting", json());
  server_options o;
  o.config = config;
  o.hub = caf::actor_cast<caf::actor>(self);
  o.client_version = self->state.options.client_version;
  o.parent_environment = self->state.options.parent_environment;
  o.sandbox = self->state.options.sandbox;
  o.http = self->state.http;
  o.threads = self->state.options.threads;
  e.actor = spawn_server(self, std::move(o));
}

void stop_server(self_ptr self, const std::string& name) {
  auto it = self->state.servers.find(name);
  if (it == self->state.servers.end()) return;
  if (it->second.status.value("runtimeStatus", "") == "starting")
    announce(self, name, "cancelled", json());
  if (it->second.actor) {
    self->unlink_from(it->second.actor);
    self->send_exit(it->second.actor, caf::exit_reason::user_shutdown);
  }
  self->state.servers.erase(it);
}

caf::error invalid(const std::string& message) {
  return make_error(errc::invalid_request, "Invalid request: " + message);
}

/// A required string field, or why not.
caf::expected<std::string> required_string(const json& params, const char* field) {
  auto it = params.find(field);
  if (it == params.end() || it->is_null()) return invalid(std::string{"missing field `"} + field + "`");
  if (!it->is_string())
    return invalid(std::string{"invalid type for `"} + field + "`, expected a string");
  return it->get<std::string>();
}

caf::expected<json> status_list(self_ptr self, const json& params) {
  std::string only;
  if (auto it = params.find("serverName"); it != params.end() && !it->is_null()) {
    if (!it->is_string()) return invalid("invalid type for `serverName`, expected a string");
    only = it->get<std::string>();
  }
  size_t from = 0;
  if (auto it = params.find("cursor"); it != params.end() && !it->is_null()) {
    if (!it->is_string()) return invalid("invalid type for `cursor`, expected a string");
    try {
      from = std::stoul(it->get<std::string>());
    } catch (...) {
      return invalid("unknown cursor `" + it->get<std::string>() + "`");
    }
  }
  size_t limit = 0;  // 0: all
  if (auto it = params.find("limit"); it != params.end() && !it->is_null()) {
    if (!it->is_number_unsigned()) return invalid("invalid type for `limit`, expected u32");
    limit = it->get<size_t>();
  }
  bool tools_only = params.value("detail", json()).is_string() && params["detail"] == "toolsAndAuthOnly";
  std::vector<const entry*> matching;
  for (auto& [name, e] : self->state.servers)
    if (only.empty() || name == only) matching.push_back(&e);
  json data = json::array();
  size_t end = limit == 0 ? matching.size() : std::min(matching.size(), from + limit);
  for (size_t i = from; i < end; ++i) {
    json s = matching[i]->status;
    if (tools_only) {
      s["resources"] = json::array();
      s["resourceTemplates"] = json::array();
    }
    data.push_back(std::move(s));
  }
  json out = {{"data", std::move(data)}};
  out["nextCursor"] = end < matching.size() ? json(std::to_string(end)) : json();
  return out;
}

/// mcpServer/oauth/login: parley signs in to no MCP server. An unknown name
/// and a stdio server are refused as Codex 0.169 refuses them (-32600, its
/// words); a streamable-HTTP one fails as Codex's failed logins do (-32603,
/// "failed to login to MCP server"), saying why: OAuth needs a browser for
/// the user and a store for the tokens, and parley has neither here.
caf::expected<json> oauth_login(self_ptr self, const json& params) {
  auto name = required_string(params, "name");
  if (!name) return name.error();
  auto it = self->state.servers.find(*name);
  if (it == self->state.servers.end())
    return make_error(errc::invalid_request, "No MCP server named '" + *name + "' found.");
  if (it->second.config.is_stdio())
    return make_error(errc::invalid_request, "OAuth login is only supported for streamable HTTP servers.");
  return make_error(errc::internal,
                    "failed to login to MCP server '" + *name
                        + "': parley does not do OAuth (it has no browser to send the user to and"
                          " no store for the tokens); give the server a token with"
                          " bearer_token_env_var or http_headers in its [mcp_servers."
                        + *name + "] table instead");
}

/// config.toml again: servers added, removed or changed start or stop.
caf::expected<json> reload(self_ptr self) {
  auto& o = self->state.options;
  model_config::load_request req;
  req.path = o.config_file;
  req.explicit_path = o.config_file_given;
  req.overrides = o.config_overrides;
  auto loaded = model_config::load(req);
  if (!loaded) return invalid("config.toml cannot be used: " + loaded.error);
  const auto& wanted = loaded.config->mcp;
  std::vector<std::string> gone, changed, added;
  for (auto& [name, e] : self->state.servers) {
    auto it = wanted.find(name);
    if (it == wanted.end())
      gone.push_back(name);
    else if (it->second != e.config)
      changed.push_back(name);
    else
      e.config.tool_approval_modes = it->second.tool_approval_modes;  // no restart
  }
  for (auto& [name, s] : wanted)
    if (!self->state.servers.count(name)) added.push_back(name);
  for (auto& name : gone) stop_server(self, name);
  for (auto& name : changed) {
    stop_server(self, name);
    start_server(self, wanted.at(name));
  }
  for (auto& name : added) start_server(self, wanted.at(name));
  refresh_offer(self);
  PARLEY_INFO("mcp event=reload added={} removed={} changed={} unchanged={}", added.size(),
              gone.size(), changed.size(), wanted.size() - added.size() - changed.size());
  return json::object();
}

/// A model's call accepted "always" (from its turn): config.toml gets the
/// tool's `[mcp_servers.S.tools.T] approval_mode = "approve"`, as Codex
/// writes it, and the tool is offered as `approve` from now on (no
/// restart: the approval mode matters to the calls, not to the server).
/// Only for a server whose table is in the file (one that -c alone
/// configures is not written, as Codex writes only a server its user
/// config has). The hub is detached: the write blocks its own thread only.
caf::expected<json> persist_approval(self_ptr self, const json& params) {
  auto server = required_string(params, "server");
  if (!server) return server.error();
  auto tool = required_string(params, "tool");
  if (!tool) return tool.error();
  auto it = self->state.servers.find(*server);
  if (it == self->state.servers.end())
    return make_error(errc::internal, "unknown MCP server '" + *server + "'");
  const auto& path = self->state.options.config_file;
  if (path.empty()) return make_error(errc::internal, "parley reads no config.toml");
  auto written = model_config::set_table_value(path, {"mcp_servers", *server, "tools", *tool},
                                               "approval_mode", "approve", 2);
  if (!written) {
    PARLEY_WARN("mcp event=approval_not_persisted server={} tool={} file={} why=\"{}\"", *server,
                *tool, path, written.message);
    return make_error(errc::internal, "config.toml was not written: " + written.message);
  }
  it->second.config.tool_approval_modes[*tool] = "approve";
  refresh_offer(self);
  PARLEY_INFO("mcp event=approval_persisted server={} tool={} file={}", *server, *tool, path);
  return json::object();
}

caf::behavior hub(self_ptr self, hub_options options) {
  if (options.parent_environment.empty())
    for (char** e = environ; e && *e; ++e) options.parent_environment.emplace_back(*e);
  self->state.options = std::move(options);
  install_default_handlers(self, "mcp_hub");
  // A server that dies on its own (it never should: it traps its child's
  // failures) is shown as failed; the runtime's stop ends the hub and,
  // through the links, every server.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    for (auto& [name, e] : self->state.servers) {
      if (e.actor && e.actor.address() == msg.source) {
        PARLEY_ERROR("mcp event=server_actor_died server={} reason={}", name,
                     caf::to_string(msg.reason));
        e.actor = caf::actor{};
        e.status["runtimeStatus"] = "failed";
        e.status["toolsError"] = "parley's actor for this server stopped: "
                                 + caf::to_string(msg.reason) + "; reload to start it again";
        refresh_offer(self);
        return;
      }
    }
    self->quit(msg.reason);
  });
  self->set_down_handler(
      [self](caf::down_msg& dm) { self->state.subscribers.erase(dm.source); });
  for (auto& [name, s] : self->state.options.servers) start_server(self, s);
  return {
      [self](atom::status, std::string& name, std::string& text) {
        auto it = self->state.servers.find(name);
        // A server stopped by a reload may still have been on its way.
        if (it == self->state.servers.end() || !it->second.actor
            || it->second.actor.address()
                   != caf::actor_cast<caf::actor_addr>(self->current_sender()))
          return;
        auto status = json::parse(text, nullptr, false);
        if (!status.is_object()) return;
        // For the model's offer only: no client's status shows it.
        auto instructions = status.value("instructions", json());
        it->second.instructions = instructions.is_string() ? instructions.get<std::string>() : "";
        status.erase("instructions");
        auto was = it->second.status.value("runtimeStatus", "");
        auto now = status.value("runtimeStatus", "");
        it->second.status = std::move(status);
        if (now != was)
          announce(self, name, startup_state(now), it->second.status.value("toolsError", json()));
        refresh_offer(self);
      },
      [self](atom::threads, thread_manager_actor& manager) {
        self->state.options.threads = manager;
        for (auto& [name, e] : self->state.servers)
          if (e.actor) self->send(e.actor, atom::threads::value, manager);
      },
      [self](atom::subscribe, caf::actor& who) {
        if (!who) return;
        self->monitor(who);
        self->state.subscribers.emplace(who.address(), std::move(who));
      },
      [self](parley::atom::mcp_tools, uint64_t known) -> caf::result<uint64_t, std::string> {
        auto& st = self->state;
        if (known == st.offer_generation) return {st.offer_generation, std::string{}};
        return {st.offer_generation, st.offer};
      },
      [self](parley::atom::mcp_cancel, std::string& server, std::string& token) {
        auto it = self->state.servers.find(server);
        if (it != self->state.servers.end() && it->second.actor)
          self->send(it->second.actor, parley::atom::mcp_cancel::value, std::move(token));
      },
      [self](atom::call, std::string& method, std::string& params_text) -> caf::result<std::string> {
        auto params = json::parse(params_text, nullptr, false);
        if (params.is_discarded() || params.is_null()) params = json::object();
        if (!params.is_object()) return invalid("params must be an object");
        auto answer = [](caf::expected<json> r) -> caf::result<std::string> {
          if (!r) return r.error();
          return r->dump(-1, ' ', false, json::error_handler_t::replace);
        };
        if (method == "mcpServerStatus/list") return answer(status_list(self, params));
        if (method == "config/mcpServer/reload") return answer(reload(self));
        if (method == "mcpServer/oauth/login") return answer(oauth_login(self, params));
        if (method == "mcpToolApproval/persist") return answer(persist_approval(self, params));
        // A model's call from its turn: the client method's checks, with
        // progress and cancellation for the turn (mcp_server.cpp).
        bool model_call = method == "mcpToolCall";
        bool tool_call = model_call || method == "mcpServer/tool/call";
        if (!tool_call && method != "mcpServer/resource/read")
          return make_error(errc::method_not_found, "method not found: `" + method + "`");
        auto server = required_string(params, "server");
        if (!server) return server.error();
        if (tool_call) {
          for (auto field : {model_call ? "progressToken" : "threadId", "tool"})
            if (auto f = required_string(params, field); !f) return f.error();
        } else if (auto uri = required_string(params, "uri"); !uri) {
          return uri.error();
        }
        auto it = self->state.servers.find(*server);
        if (it == self->state.servers.end())
          return make_error(errc::internal, "unknown MCP server '" + *server + "' (no [mcp_servers."
                                                + *server + "] in config.toml)");
        const auto& e = it->second;
        if (!e.actor) {
          std::string why = !e.config.enabled ? "it is disabled (enabled = false)"
                                              : e.status.value("toolsError", json()).is_string()
                                                    ? e.status["toolsError"].get<std::string>()
                                                    : "it is not running";
          return make_error(errc::invalid_request,
                            "MCP server `" + *server + "` cannot be called: " + why);
        }
        auto rp = self->make_response_promise();
        rp.delegate(e.actor, atom::call::value, std::move(method), std::move(params_text));
        return caf::delegated<std::string>{};
      },
  };
}

}  // namespace hub_impl

caf::actor spawn_hub(caf::actor_system& system, hub_options options) {
  return system.spawn<caf::detached>(
      [](caf::stateful_actor<hub_impl::hub_state>* self, hub_options o) {
        return hub_impl::hub(self, std::move(o));
      },
      std::move(options));
}

}  // namespace parley::mcp
