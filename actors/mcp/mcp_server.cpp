#include "actors/mcp/mcp_server.hpp"

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_promise.hpp>
#include <caf/send.hpp>
#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <variant>

#include "actors/core/atoms.hpp"
#include "actors/core/errors.hpp"
#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "actors/core/passed_rpc_error.hpp"
#include "actors/mcp/child_env.hpp"
#include "actors/mcp/elicitation.hpp"
#include "actors/mcp/framing.hpp"
#include "actors/mcp/http_link.hpp"
#include "actors/mcp/messages.hpp"
#include "actors/mcp/server_launch.hpp"
#include "actors/mcp/stdio_child.hpp"

namespace parley::mcp {

namespace server_impl {

using namespace std::chrono_literals;

constexpr auto first_backoff = 500ms;
constexpr auto max_backoff = std::chrono::milliseconds(30'000);
// A start that stayed up this long resets the backoff.
constexpr auto stable_after = 10s;
// Pages of a listing a server may send before it counts as looping.
constexpr int max_pages = 1000;
// Calls that may wait for a server still starting.
constexpr size_t max_waiting_calls = 1000;
// Ids of timed-out calls remembered to name their late answers in the log.
constexpr size_t max_remembered_timeouts = 1000;
// notifications/message lines logged per start.
constexpr size_t max_messages_logged = 2000;
// Elicitations declined at once (flood, no thread) logged per start.
constexpr size_t max_refusals_logged = 100;
// How long the thread manager may take to hand over an elicitation's
// approval actor (it answers at once; this is only a backstop).
constexpr auto elicitation_handover = 10s;

enum class phase { starting, connected, failed };

const char* to_string(phase p) {
  switch (p) {
    case phase::starting: return "starting";
    case phase::connected: return "connected";
    case phase::failed: return "failed";
  }
  return "failed";
}

/// A request of parley's to the server, waiting for its answer.
struct pending {
  /// What it was, for errors and the log ("tools/call `echo`").
  std::string what;
  /// Gets the answer (a response or an error response).
  std::function<void(incoming&)> on_answer;
  /// Gets a failure of parley's (timeout, exit, cut off).
  std::function<void(const std::string&)> on_failure;
  /// Its deadline and the key that set it, for the timeout's message.
  std::chrono::milliseconds deadline{0};
  std::string deadline_key = "tool_timeout_sec";
  /// A model's call (mcpToolCall): its progressToken, and who hears its
  /// progress (the turn).
  std::string progress_token;
  caf::actor caller;
  /// A tools/call's thread and turn: where the server's elicitations go
  /// while it is in flight.
  std::optional<call_owner> owner;
};

/// A server's elicitation/create, asked of a thread's clients.
struct elicitation_entry {
  /// The server's request id, answered once, and the start it came from.
  json request_id;
  uint64_t generation = 0;
  std::string thread_id;
  /// URL mode (the user goes to a URL): the answer carries no content.
  bool url_mode = false;
  /// The thread's approval actor for it; invalid while the thread is asked
  /// for one.
  approval_actor approval;
  /// Its thread's calls ended (or the server stopped) before it was
  /// answered: cancelled.
  bool withdrawn = false;
};

/// A client's call that came while the server was starting.
struct waiting_call {
  std::string method;
  json params;
  caf::response_promise promise;
  caf::actor caller;
};

struct server_state {
  static inline const char* name = "mcp_server";
  server_options options;
  std::unique_ptr<server_link> child;
  uint64_t generation = 0;
  /// notifications/message lines logged since the start (bounded, as the
  /// server's stderr is: a chatty server must not fill parley's log).
  size_t messages_logged = 0;
  phase now = phase::starting;
  /// Why it is not connected (shown as toolsError); empty when fine.
  std::string error;
  /// Cut off: no restart until a reload.
  bool cut_off = false;
  std::chrono::steady_clock::time_point connected_at;
  std::chrono::milliseconds backoff = first_backoff;
  int64_t next_id = 1;
  std::map<int64_t, pending> in_flight;
  std::deque<waiting_call> waiting;
  std::set<int64_t> timed_out;
  std::deque<int64_t> timed_out_order;
  /// Calls their callers gave up (notifications/cancelled sent).
  std::set<int64_t> cancelled;
  // What the handshake and the listings found.
  json server_info;         // null until initialized
  /// The initialize answer's `instructions` ("" without): the hub gives
  /// them to the model as the description of the server's namespace tool.
  std::string instructions;
  json capabilities;        // null until initialized
  std::string protocol_version;
  json tools = json::object();  // name -> Tool (enabled ones only)
  std::set<std::string> left_out;  // listed, but not enabled by config.toml
  json tool_list_meta;
  json resources = json::array();
  json resource_templates = json::array();
  /// tools/list_changed came while the tools were being listed.
  bool relist = false;
  /// Elicitations pending, by parley's own number for each.
  std::map<uint64_t, elicitation_entry> elicitations;
  uint64_t next_elicitation = 1;
  /// Elicitations refused since the start (logged up to a bound).
  size_t elicitations_refused = 0;
};

using self_ptr = caf::stateful_actor<server_state>*;

const std::string& name_of(self_ptr self) {
  return self->state.options.config.name;
}

/// Seconds for messages ("10 s", "2.5 s").
std::string seconds(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

json status_json(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.options.config;
  // stdio: no auth (as Codex says); HTTP: a bearer token when one is
  // configured (OAuth is not done, so never oAuth or notLoggedIn); else
  // unsupported once the server has answered without one, unknown while it
  // has not (Codex says unknown when it cannot reach the server to ask).
  bool bearer = !cfg.bearer_token_env_var.empty() || cfg.http_headers.count("Authorization") > 0;
  const char* auth = cfg.is_stdio()        ? "unsupported"
                     : bearer              ? "bearerToken"
                     : st.server_info.is_null() ? "unknown"
                                                : "unsupported";
  json s = {{"name", name_of(self)},
            {"authStatus", auth},
            {"pluginId", nullptr},  // no plugins: every server is config.toml's
            {"tools", st.tools},
            {"resources", st.resources},
            {"resourceTemplates", st.resource_templates},
            {"runtimeStatus", to_string(st.now)},
            {"serverInfo", st.server_info},
            {"serverCapabilities", st.capabilities},
            {"toolListMeta", st.tool_list_meta},
            {"toolsError", st.error.empty() ? json() : json(st.error)},
            {"httpOrigin", cfg.is_stdio() ? json() : json(origin_of(cfg.url))}};
  return s;
}

/// The status the hub is sent: the client's status and what the hub keeps
/// for the model's offer only (it strips it before any client sees it).
json hub_status_json(self_ptr self) {
  auto s = status_json(self);
  s["instructions"] = self->state.instructions;
  return s;
}

void publish(self_ptr self) {
  self->send(self->state.options.hub, atom::status::value, name_of(self),
             hub_status_json(self).dump(-1, ' ', false, json::error_handler_t::replace));
}

caf::error call_error(const std::string& message) {
  return make_error(errc::internal, message);
}

/// An error response's `data` as JSON text in the server's key order (the
/// model reads it as Codex shows it); empty when it has none.
std::string error_data_text(const std::string& line) {
  auto j = nlohmann::ordered_json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return {};
  auto data = j["error"].find("data");
  if (data == j["error"].end()) return {};
  return data->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void remember_timeout(self_ptr self, int64_t id) {
  auto& st = self->state;
  st.timed_out.insert(id);
  st.timed_out_order.push_back(id);
  if (st.timed_out_order.size() > max_remembered_timeouts) {
    st.timed_out.erase(st.timed_out_order.front());
    st.cancelled.erase(st.timed_out_order.front());
    st.timed_out_order.pop_front();
  }
}

void withdraw_orphans(self_ptr self);

/// Fails everything in flight and waiting with `why`; the elicitations,
/// whose calls these were, are withdrawn.
void fail_all(self_ptr self, const std::string& why) {
  auto& st = self->state;
  auto in_flight = std::move(st.in_flight);
  st.in_flight.clear();
  for (auto& [id, p] : in_flight) p.on_failure(why);
  auto waiting = std::move(st.waiting);
  st.waiting.clear();
  for (auto& w : waiting) w.promise.deliver(call_error(why));
  withdraw_orphans(self);
}

void forget_listing(self_ptr self) {
  auto& st = self->state;
  st.server_info = nullptr;
  st.instructions.clear();
  st.capabilities = nullptr;
  st.protocol_version.clear();
  st.relist = false;
  st.tools = json::object();
  st.left_out.clear();
  st.tool_list_meta = nullptr;
  st.resources = json::array();
  st.resource_templates = json::array();
}

void start(self_ptr self);
bool cfg_is_stdio(self_ptr self) { return self->state.options.config.is_stdio(); }
void start_http(self_ptr self);
void handshake(self_ptr self);
void serve_waiting(self_ptr self);

/// The server broke the protocol or missed its startup deadline: killed,
/// not started again until a reload.
void cut_off(self_ptr self, const std::string& reason) {
  auto& st = self->state;
  PARLEY_WARN("mcp event=cut_off server={} reason=\"{}\"", name_of(self), reason);
  ++st.generation;  // anything still on its way from this child is stale
  st.child.reset();
  st.now = phase::failed;
  st.cut_off = true;
  st.error = "cut off: " + reason;
  fail_all(self, "MCP server `" + name_of(self) + "` was cut off: " + reason);
  publish(self);
}

/// The process ended (or never started): calls fail, a restart is planned.
void lost(self_ptr self, const std::string& how) {
  auto& st = self->state;
  ++st.generation;
  st.child.reset();
  bool was_stable = st.now == phase::connected
                    && std::chrono::steady_clock::now() - st.connected_at >= stable_after;
  if (was_stable) st.backoff = first_backoff;
  auto delay = st.backoff;
  st.backoff = std::min(max_backoff, st.backoff * 2);
  PARLEY_WARN("mcp event=exited server={} how=\"{}\" restart_in_ms={}", name_of(self), how,
              delay.count());
  st.now = phase::failed;
  st.error = how + "; starting again in " + seconds(delay);
  fail_all(self, "MCP server `" + name_of(self) + "` " + how + " during the call");
  forget_listing(self);
  publish(self);
  self->delayed_send(self, delay, atom::restart::value, st.generation);
}

void send_line(self_ptr self, std::string line) {
  auto& st = self->state;
  if (!st.child) return;
  if (!st.child->send(std::move(line)))
    cut_off(self, cfg_is_stdio(self) ? "stopped reading its input (more than "
                                           + std::to_string(stdio_child::max_queued_bytes >> 20)
                                           + " MiB queued)"
                                     : "left more than " + std::to_string(http_link::max_in_flight)
                                           + " requests unanswered");
}

/// Sends a request; `timeout` (if any) fails it when unanswered.
void ask(self_ptr self, const std::string& method, json params, pending p,
         std::chrono::milliseconds timeout) {
  auto& st = self->state;
  auto id = st.next_id++;
  p.deadline = timeout;
  st.in_flight.emplace(id, std::move(p));
  if (timeout.count() > 0)
    self->delayed_send(self, timeout, atom::timer::value, st.generation, id);
  send_line(self, request_line(id, method, params));
}

/// Lists every page of `method` into `into` (items under `key`), then runs `done`.
void list_all(self_ptr self, std::string method, std::string key,
              std::shared_ptr<json> into, json cursor, int page,
              std::function<void(json first_meta)> done, json first_meta = nullptr) {
  json params = json::object();
  if (!cursor.is_null()) params["cursor"] = cursor;
  pending p;
  p.what = method;
  auto gen = self->state.generation;
  p.on_answer = [self, method, key, into, page, done, first_meta, gen](incoming& m) mutable {
    if (gen != self->state.generation) return;
    if (m.what == incoming::kind::error_response) {
      done(json{{"error", method + " failed: " + m.error_message}});
      return;
    }
    if (!m.result.is_object() || !m.result.contains(key) || !m.result[key].is_array()) {
      cut_off(self, method + " answered without an array `" + key + "`");
      return;
    }
    if (page == 0 && m.result.contains("_meta")) first_meta = m.result["_meta"];
    for (auto& item : m.result[key]) into->push_back(std::move(item));
    auto next = m.result.find("nextCursor");
    if (next != m.result.end() && next->is_string() && !next->get<std::string>().empty()) {
      if (page + 1 >= max_pages) {
        cut_off(self, method + " did not end after " + std::to_string(max_pages) + " pages");
        return;
      }
      list_all(self, method, key, into, *next, page + 1, done, first_meta);
      return;
    }
    done(first_meta);
  };
  // While starting, the start's deadline covers every page; a listing
  // again (tools/list_changed) gets one of its own, the same length.
  p.on_failure = [self, method](const std::string& why) {
    PARLEY_WARN("mcp event=listing_failed server={} method={} why=\"{}\"", name_of(self), method,
                why);
  };
  p.deadline_key = "startup_timeout_sec";
  auto& st = self->state;
  auto deadline = st.now == phase::connected ? st.options.config.startup_timeout
                                             : std::chrono::milliseconds(0);
  ask(self, method, params, std::move(p), deadline);
}

/// The tools a server listed, by name, enabled ones only.
json tools_by_name(self_ptr self, const json& listed) {
  json out = json::object();
  self->state.left_out.clear();
  for (const auto& t : listed) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) continue;
    auto name = t["name"].get<std::string>();
    if (!self->state.options.config.tool_enabled(name)) {
      self->state.left_out.insert(name);
      continue;
    }
    json tool = t;
    if (!tool.contains("inputSchema")) tool["inputSchema"] = json::object();
    out[name] = std::move(tool);
  }
  return out;
}

/// Tools, then (when the server has them) resources and templates; then
/// connected.
void list_inventory(self_ptr self, bool during_start) {
  auto tools = std::make_shared<json>(json::array());
  list_all(self, "tools/list", "tools", tools, nullptr, 0,
           [self, tools, during_start](json meta) {
             auto& st = self->state;
             if (meta.is_object() && meta.contains("error")) {
               st.error = meta["error"].get<std::string>();
               st.tools = json::object();
             } else {
               st.tools = tools_by_name(self, *tools);
               st.tool_list_meta = meta;
             }
             auto finish = [self, during_start] {
               auto& state = self->state;
               if (during_start) {
                 state.now = phase::connected;
                 state.connected_at = std::chrono::steady_clock::now();
                 PARLEY_INFO("mcp event=connected server={} tools={} resources={} protocol={}",
                             name_of(self), state.tools.size(), state.resources.size(),
                             state.protocol_version);
               }
               publish(self);
               if (during_start) serve_waiting(self);
               // The tools changed while they were being listed.
               if (state.relist) {
                 state.relist = false;
                 list_inventory(self, false);
               }
             };
             if (!st.capabilities.is_object() || !st.capabilities.contains("resources"))
               return finish();
             auto resources = std::make_shared<json>(json::array());
             list_all(self, "resources/list", "resources", resources, nullptr, 0,
                      [self, resources, finish](json) {
                        self->state.resources = std::move(*resources);
                        auto templates = std::make_shared<json>(json::array());
                        list_all(self, "resources/templates/list", "resourceTemplates", templates,
                                 nullptr, 0, [self, templates, finish](json) {
                                   self->state.resource_templates = std::move(*templates);
                                   finish();
                                 });
                      });
           });
}

void on_initialized(self_ptr self, incoming& m) {
  auto& st = self->state;
  if (m.what == incoming::kind::error_response)
    return cut_off(self, "initialize failed: " + m.error_message);
  if (!m.result.is_object() || !m.result.contains("protocolVersion")
      || !m.result["protocolVersion"].is_string())
    return cut_off(self, "initialize answered without a protocolVersion");
  auto version = m.result["protocolVersion"].get<std::string>();
  if (!supported_protocol_version(version))
    return cut_off(self, "speaks MCP revision " + version + ", which parley does not");
  st.protocol_version = version;
  st.capabilities = m.result.value("capabilities", json::object());
  if (!st.capabilities.is_object()) st.capabilities = json::object();
  auto info = m.result.value("serverInfo", json());
  if (info.is_object() && info.contains("name") && info["name"].is_string()
      && info.contains("version") && info["version"].is_string()) {
    json kept = {{"name", info["name"]}, {"version", info["version"]}};
    for (auto key : {"title", "description", "websiteUrl"})
      if (info.contains(key) && info[key].is_string()) kept[key] = info[key];
    if (info.contains("icons") && info["icons"].is_array()) kept["icons"] = info["icons"];
    st.server_info = std::move(kept);
  }
  auto instructions = m.result.value("instructions", json());
  st.instructions = instructions.is_string() ? instructions.get<std::string>() : std::string{};
  send_line(self, notification_line("notifications/initialized", nullptr));
  list_inventory(self, true);
}

void start(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.options.config;
  ++st.generation;
  st.now = phase::starting;
  st.error.clear();
  st.messages_logged = 0;
  st.elicitations_refused = 0;
  forget_listing(self);
  if (!cfg.is_stdio()) return start_http(self);
  child_spec spec;
  spec.env = child_environment(cfg, st.options.parent_environment);
  auto launch = server_launch(cfg, st.options.sandbox.get(), spec.env);
  if (auto* refused = std::get_if<launch_refusal>(&launch))
    return cut_off(self, "it cannot be confined: " + refused->reason
                             + " (or give it sandbox_mode = \"danger-full-access\")");
  auto& ready = std::get<command_launch>(launch);
  spec.argv = std::move(ready.argv);
  spec.cwd = cfg.cwd;
  spec.name = cfg.name;
  std::string error;
  st.child = stdio_child::start(spec, caf::actor_cast<caf::actor>(self), st.generation, error);
  if (!st.child) return lost(self, error);
  PARLEY_INFO("mcp event=starting server={} {} command=\"{}\" sandbox=\"{}\"", cfg.name,
              st.child->describe(), cfg.command, describe_confinement(cfg, ready));
  handshake(self);
}

/// The value of `name` in parley's environment ("NAME=value" entries), if set.
const std::string* variable(const std::vector<std::string>& environment, const std::string& name) {
  for (const auto& e : environment)
    if (e.size() > name.size() && e[name.size()] == '=' && e.compare(0, name.size(), name) == 0)
      return &e;
  return nullptr;
}

void start_http(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.options.config;
  if (!st.options.http) return cut_off(self, "parley has no HTTP client for it");
  http_spec spec;
  spec.url = cfg.url;
  spec.name = cfg.name;
  // Within the startup deadline, so an unreachable host is a failed start
  // (tried again after a backoff) rather than a missed deadline (cut off).
  spec.connect_timeout_ms = std::max<long>(100, std::min<long>(10'000, cfg.startup_timeout.count() / 2));
  const auto& environment = st.options.parent_environment;
  auto from_variable = [&](const std::string& header, const std::string& var, const std::string& prefix) {
    if (auto* e = variable(environment, var))
      spec.headers.emplace_back(header, prefix + e->substr(var.size() + 1));
    else
      PARLEY_WARN("mcp event=header_unset server={} header={} variable={}", cfg.name, header, var);
  };
  if (!cfg.bearer_token_env_var.empty())
    from_variable("Authorization", cfg.bearer_token_env_var, "Bearer ");
  for (const auto& [header, value] : cfg.http_headers) spec.headers.emplace_back(header, value);
  for (const auto& [header, var] : cfg.env_http_headers) from_variable(header, var, "");
  st.child = std::make_unique<http_link>(std::move(spec), st.options.http,
                                         caf::actor_cast<caf::actor>(self), st.generation);
  PARLEY_INFO("mcp event=starting server={} {}", cfg.name, st.child->describe());
  handshake(self);
}

/// initialize, its deadline shared with the listings (timer id 0).
void handshake(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.options.config;
  publish(self);
  // The handshake and the listings share one deadline (timer id 0).
  self->delayed_send(self, cfg.startup_timeout, atom::timer::value, st.generation, int64_t{0});
  pending p;
  p.what = "initialize";
  auto gen = st.generation;
  p.on_answer = [self, gen](incoming& m) {
    if (gen == self->state.generation) on_initialized(self, m);
  };
  p.on_failure = [](const std::string&) {};
  ask(self, "initialize", initialize_params(st.options.client_version), std::move(p),
      std::chrono::milliseconds(0));
}

// -- client calls -------------------------------------------------------------

template <class Json>
Json tool_call_result(const Json& r) {
  Json out = Json::object();
  out["content"] = r.contains("content") && r["content"].is_array() ? r["content"] : Json::array();
  if (r.contains("isError") && r["isError"].is_boolean()) out["isError"] = r["isError"];
  if (r.contains("structuredContent")) out["structuredContent"] = r["structuredContent"];
  if (r.contains("_meta")) out["_meta"] = r["_meta"];
  return out;
}

void run_call(self_ptr self, const std::string& method, const json& params,
              caf::response_promise promise, caf::actor caller) {
  auto& st = self->state;
  const auto& server = name_of(self);
  std::string mcp_method, what;
  json mcp_params;
  std::function<json(const json&)> shape;
  bool model_call = method == "mcpToolCall";
  std::optional<call_owner> owner;
  if (model_call || method == "mcpServer/tool/call") {
    auto tool = params.value("tool", std::string{});
    // A tool the server does not list is still asked for, as Codex does
    // (the server answers, usually with isError); one config.toml leaves
    // out is not.
    if (st.left_out.count(tool)) {
      promise.deliver(make_error(errc::invalid_request,
                                 "tool `" + tool + "` of MCP server `" + server
                                     + "` is not enabled in config.toml (enabled_tools, "
                                       "disabled_tools)"));
      return;
    }
    mcp_method = "tools/call";
    what = "tools/call `" + tool + "`";
    mcp_params = {{"name", tool}};
    if (params.contains("arguments") && !params["arguments"].is_null())
      mcp_params["arguments"] = params["arguments"];
    if (params.contains("_meta") && params["_meta"].is_object())
      mcp_params["_meta"] = params["_meta"];
    // A model's call asks for progress under the token its turn chose.
    if (model_call) mcp_params["_meta"] = {{"progressToken", params.value("progressToken", "")}};
    shape = tool_call_result<json>;
    // Whose call it is: the server's elicitations go to that thread (a
    // turn's call names its turn; a client's call has none).
    owner = call_owner{params.value("threadId", std::string{}), params.value("turnId", std::string{})};
  } else {
    mcp_method = "resources/read";
    what = "resources/read `" + params.value("uri", std::string{}) + "`";
    mcp_params = {{"uri", params.value("uri", std::string{})}};
    shape = [](const json& r) {
      json contents = r.contains("contents") && r["contents"].is_array() ? r["contents"]
                                                                           : json::array();
      return json{{"contents", contents}};
    };
  }
  pending p;
  p.what = what;
  bool tool_call = mcp_method == "tools/call";
  p.on_answer = [promise, shape, what, server, model_call, tool_call](incoming& m) mutable {
    if (m.what == incoming::kind::error_response) {
      auto summary = "MCP server `" + server + "` refused " + what + ": " + m.error_message + " ("
                     + std::to_string(m.error_code) + ")";
      // A tool call's error goes back as the server gave it (code,
      // message, data: a -32042 names the URLs the user must open), as
      // Codex passes it.
      if (tool_call)
        promise.deliver(make_passed_rpc_error(
            std::move(summary), {m.error_code, m.error_message, error_data_text(m.line)}));
      else
        promise.deliver(call_error(summary));
      return;
    }
    if (!m.result.is_object()) {
      promise.deliver(call_error("MCP server `" + server + "` answered " + what
                                 + " with something other than an object"));
      return;
    }
    if (model_call) {
      // The model is told the result with the server's key order (as
      // Codex tells it): read again from the line, keys in order.
      auto line = nlohmann::ordered_json::parse(m.line, nullptr, false);
      if (line.is_object() && line.contains("result") && line["result"].is_object()) {
        promise.deliver(tool_call_result(line["result"])
                            .dump(-1, ' ', false, json::error_handler_t::replace));
        return;
      }
    }
    promise.deliver(shape(m.result).dump(-1, ' ', false, json::error_handler_t::replace));
  };
  p.on_failure = [promise](const std::string& why) mutable { promise.deliver(call_error(why)); };
  if (model_call) {
    p.progress_token = params.value("progressToken", "");
    p.caller = std::move(caller);
  }
  p.owner = std::move(owner);
  ask(self, mcp_method, std::move(mcp_params), std::move(p), st.options.config.tool_timeout);
}

/// A turn gave its call up (interrupted): the server is told
/// (notifications/cancelled), and its answer, should it come, is dropped.
void cancel_call(self_ptr self, const std::string& token) {
  auto& st = self->state;
  for (auto it = st.in_flight.begin(); it != st.in_flight.end(); ++it) {
    if (it->second.progress_token != token || token.empty()) continue;
    auto id = it->first;
    auto p = std::move(it->second);
    st.in_flight.erase(it);
    remember_timeout(self, id);
    st.cancelled.insert(id);
    PARLEY_INFO("mcp event=call_cancelled server={} id={} what=\"{}\"", name_of(self), id, p.what);
    send_line(self, notification_line("notifications/cancelled",
                                      {{"requestId", id}, {"reason", "the turn was interrupted"}}));
    p.on_failure("MCP server `" + name_of(self) + "`: " + p.what + " was cancelled");
    return;
  }
  // Still waiting for the server to start: it is never sent.
  for (auto it = st.waiting.begin(); it != st.waiting.end(); ++it) {
    if (it->params.value("progressToken", "") != token || token.empty()) continue;
    it->promise.deliver(call_error("cancelled before the server started"));
    st.waiting.erase(it);
    return;
  }
}

/// notifications/progress for a model's call: to the turn that made it.
void on_progress(self_ptr self, const json& params) {
  if (!params.is_object()) return;
  auto token = params.value("progressToken", json());
  if (!token.is_string()) return;
  for (auto& [id, p] : self->state.in_flight)
    if (p.caller && p.progress_token == token.get<std::string>()) {
      self->send(p.caller, parley::atom::mcp_progress::value, p.progress_token,
                 params.dump(-1, ' ', false, json::error_handler_t::replace));
      return;
    }
  PARLEY_DEBUG("mcp event=progress_unclaimed server={} token={}", name_of(self), token.dump());
}

void serve_waiting(self_ptr self) {
  auto waiting = std::move(self->state.waiting);
  self->state.waiting.clear();
  for (auto& w : waiting) run_call(self, w.method, w.params, std::move(w.promise), w.caller);
}

// -- from the child -----------------------------------------------------------

// -- elicitations (elicitation.hpp) -------------------------------------------

std::vector<call_owner> call_owners(self_ptr self) {
  std::vector<call_owner> out;
  for (const auto& [id, p] : self->state.in_flight)
    if (p.owner) out.push_back(*p.owner);
  return out;
}

/// Answers the server's elicitation, once; never a later start's process
/// (its ids are another's).
void answer_elicitation(self_ptr self, uint64_t token, const json& result, const char* how) {
  auto& st = self->state;
  auto it = st.elicitations.find(token);
  if (it == st.elicitations.end()) return;
  auto e = std::move(it->second);
  st.elicitations.erase(it);
  PARLEY_INFO("mcp event=elicitation_answered server={} elicitation={} thread={} outcome={} "
              "action={}",
              name_of(self), token, e.thread_id, how, result.value("action", ""));
  if (e.generation == st.generation) send_line(self, result_line(e.request_id, result));
}

/// An elicitation nobody is asked: declined at once (fail closed), logged
/// up to a bound per start.
void decline_at_once(self_ptr self, const json& id, const std::string& why) {
  auto& st = self->state;
  if (st.elicitations_refused < max_refusals_logged)
    PARLEY_WARN("mcp event=elicitation_declined server={} id={} why=\"{}\"", name_of(self),
                id.dump(), why);
  else if (st.elicitations_refused == max_refusals_logged)
    PARLEY_WARN("mcp event=elicitation_declines_suppressed server={} after={}", name_of(self),
                max_refusals_logged);
  ++st.elicitations_refused;
  send_line(self, result_line(id, elicit_result("decline")));
}

/// What the server is told: the client's answer as MCP's ElicitResult; a
/// cancel (an interrupt, a withdrawal) cancels; anything else declines:
/// the deadline, an error or malformed answer, nobody to ask.
json result_of(const approval_outcome& out, bool url_mode) {
  using kind = approval_outcome::kind;
  if (out.how == kind::decided && out.decision.answer.is_object()
      && out.decision.answer.contains("action"))
    return elicit_result_of_answer(out.decision.answer, url_mode);
  if (out.how == kind::cancelled) return elicit_result("cancel");
  return elicit_result("decline");
}

/// Its thread's calls have ended (or the server stopped): the question is
/// moot. The approval settles cancelled (its prompts voided), and its
/// outcome answers the server.
void withdraw_elicitation(self_ptr self, uint64_t token, elicitation_entry& e) {
  if (e.withdrawn) return;
  e.withdrawn = true;
  PARLEY_INFO("mcp event=elicitation_withdrawn server={} elicitation={} thread={}",
              name_of(self), token, e.thread_id);
  if (e.approval) self->send_exit(e.approval, make_error(errc::interrupted, "call ended"));
}

void withdraw_orphans(self_ptr self) {
  auto owners = call_owners(self);
  for (auto& [token, e] : self->state.elicitations) {
    bool asked_by_live_call = false;
    for (const auto& o : owners) asked_by_live_call = asked_by_live_call || o.thread_id == e.thread_id;
    if (!asked_by_live_call) withdraw_elicitation(self, token, e);
  }
}

void run_elicitation(self_ptr self, uint64_t token, approval_actor approval) {
  auto& st = self->state;
  auto it = st.elicitations.find(token);
  if (it == st.elicitations.end()) return;
  it->second.approval = approval;
  bool url_mode = it->second.url_mode;
  if (it->second.withdrawn) {
    // Its call ended while the thread was asked: never started.
    self->send_exit(approval, make_error(errc::interrupted, "call ended"));
    return answer_elicitation(self, token, elicit_result("cancel"), "withdrawn");
  }
  self->request(approval, caf::infinite, parley::atom::decide::value)
      .then(
          [self, token, url_mode](approval_outcome& out) {
            answer_elicitation(self, token, result_of(out, url_mode), to_string(out.how));
          },
          [self, token](caf::error& err) {
            PARLEY_WARN("mcp event=elicitation_failed server={} elicitation={} error=\"{}\"",
                        name_of(self), token, message_of(err));
            answer_elicitation(self, token, elicit_result("decline"), "failed");
          });
}

void on_elicitation(self_ptr self, incoming& m) {
  auto& st = self->state;
  if (auto problem = elicitation_problem(m.params); !problem.empty()) {
    PARLEY_WARN("mcp event=elicitation_malformed server={} id={} problem=\"{}\"", name_of(self),
                m.id.dump(), problem);
    return send_line(self, error_line(m.id, -32602, "invalid elicitation/create: " + problem));
  }
  if (st.elicitations.size() >= max_pending_elicitations)
    return decline_at_once(self, m.id,
                           std::to_string(st.elicitations.size())
                               + " elicitations of this server are pending already (at most "
                               + std::to_string(max_pending_elicitations) + ")");
  auto route = route_elicitation(call_owners(self));
  if (!route.owner) return decline_at_once(self, m.id, route.why_not);
  if (!st.options.threads) return decline_at_once(self, m.id, "this parley has no threads");
  auto token = st.next_elicitation++;
  auto& e = st.elicitations[token];
  e.request_id = m.id;
  e.generation = st.generation;
  e.thread_id = route.owner->thread_id;
  e.url_mode = is_url_mode(m.params);
  approval_ask ask;
  ask.thread_id = route.owner->thread_id;
  ask.request = client_request::elicitation;
  ask.request_turn = route.owner->turn_id;
  ask.request_item = "mcp-elicitation-" + name_of(self) + "-" + std::to_string(token);
  ask.request_params = elicitation_request_params(name_of(self), *route.owner, m.params);
  PARLEY_INFO("mcp event=elicitation_asked server={} elicitation={} id={} thread={} turn={} "
              "mode={}",
              name_of(self), token, m.id.dump(), route.owner->thread_id,
              route.owner->turn_id.empty() ? "null" : route.owner->turn_id,
              e.url_mode ? "url" : "form");
  self->request(st.options.threads, elicitation_handover, parley::atom::elicit::value, std::move(ask))
      .then([self, token](approval_actor& approval) { run_elicitation(self, token, approval); },
            [self, token](caf::error& err) {
              // The thread is not loaded here, or its turn is over.
              PARLEY_INFO("mcp event=elicitation_not_asked server={} elicitation={} why=\"{}\"",
                          name_of(self), token, message_of(err));
              answer_elicitation(self, token, elicit_result("decline"), "not_asked");
            });
}

void on_server_request(self_ptr self, incoming& m) {
  if (m.method == "ping") return send_line(self, result_line(m.id, json::object()));
  if (m.method == "elicitation/create") return on_elicitation(self, m);
  // parley declared no other client capability (no roots, no sampling):
  // roots/list, sampling/createMessage and anything else are unknown.
  PARLEY_INFO("mcp event=server_request server={} method={} answer=method_not_found",
              name_of(self), m.method);
  send_line(self, error_line(m.id, -32601, "parley does not offer `" + m.method
                                               + "` to MCP servers"));
}

void on_notification(self_ptr self, incoming& m) {
  if (m.method == "notifications/tools/list_changed") {
    auto& st = self->state;
    if (st.now == phase::connected) {
      PARLEY_INFO("mcp event=tools_changed server={}", name_of(self));
      return list_inventory(self, false);
    }
    // Listing already (initialize answered): list again once done.
    if (st.now == phase::starting && !st.protocol_version.empty()) st.relist = true;
    return;
  }
  if (m.method == "notifications/progress") return on_progress(self, m.params);
  if (m.method == "notifications/elicitation/complete") {
    // A URL-mode elicitation's flow ended out of band. Codex 0.169 does
    // nothing with it (its answer went back when the user accepted), and
    // neither does parley: the call it was for goes on by itself.
    auto id = m.params.is_object() ? m.params.value("elicitationId", json()) : json();
    PARLEY_INFO("mcp event=elicitation_complete server={} elicitation_id={}", name_of(self),
                id.dump());
    return;
  }
  if (m.method == "notifications/message") {
    auto& st = self->state;
    if (st.messages_logged++ >= max_messages_logged) {
      if (st.messages_logged == max_messages_logged + 1)
        PARLEY_WARN("mcp event=server_log_suppressed server={} after_lines={}", name_of(self),
                    max_messages_logged);
      return;
    }
    auto text = m.params.is_object() && m.params.contains("data") ? m.params["data"].dump() : "";
    if (text.size() > 2048) text.resize(2048);
    PARLEY_INFO("mcp event=server_log server={} line={}", name_of(self), text);
    return;
  }
  PARLEY_DEBUG("mcp event=notification server={} method={}", name_of(self), m.method);
}

void on_line(self_ptr self, const std::string& line) {
  auto parsed = parse_line(line);
  if (!parsed.message) {
    if (!parsed.problem.empty())
      cut_off(self, "sent a line that is not JSON-RPC 2.0 (" + parsed.problem + ")");
    return;
  }
  auto& m = *parsed.message;
  if (m.what == incoming::kind::response || m.what == incoming::kind::error_response) m.line = line;
  switch (m.what) {
    case incoming::kind::request: return on_server_request(self, m);
    case incoming::kind::notification: return on_notification(self, m);
    case incoming::kind::response:
    case incoming::kind::error_response: break;
  }
  auto& st = self->state;
  auto id = m.id.is_number_integer() ? m.id.get<int64_t>() : int64_t{-1};
  auto it = st.in_flight.find(id);
  if (it == st.in_flight.end()) {
    if (st.cancelled.count(id))
      PARLEY_WARN("mcp event=late_reply server={} id={} (its call was cancelled; dropped)",
                  name_of(self), id);
    else if (st.timed_out.count(id))
      PARLEY_WARN("mcp event=late_reply server={} id={} (its call had timed out; dropped)",
                  name_of(self), id);
    else
      PARLEY_WARN("mcp event=unknown_reply server={} id={} (dropped)", name_of(self), m.id.dump());
    return;
  }
  auto p = std::move(it->second);
  st.in_flight.erase(it);
  p.on_answer(m);
  if (p.owner) withdraw_orphans(self);
}

void on_timer(self_ptr self, uint64_t gen, int64_t id) {
  auto& st = self->state;
  if (gen != st.generation) return;
  if (id == 0) {
    if (st.now == phase::starting)
      cut_off(self, "did not finish the MCP handshake and its listings within "
                        + seconds(st.options.config.startup_timeout)
                        + " (startup_timeout_sec)");
    return;
  }
  auto it = st.in_flight.find(id);
  if (it == st.in_flight.end()) return;
  auto p = std::move(it->second);
  st.in_flight.erase(it);
  remember_timeout(self, id);
  PARLEY_WARN("mcp event=call_timeout server={} id={} what=\"{}\"", name_of(self), id, p.what);
  p.on_failure("MCP server `" + name_of(self) + "` did not answer " + p.what + " within "
               + seconds(p.deadline) + " (" + p.deadline_key + ")");
  if (p.owner) withdraw_orphans(self);
}

caf::behavior server_behavior(self_ptr self, server_options options) {
  self->state.options = std::move(options);
  install_default_handlers(self, "mcp_server");
  // A reload that removes or changes the server, or parley's stop: calls
  // in flight hear why before the actor goes (CAF 0.17 would drop their
  // promises silently).
  self->set_exit_handler([self](caf::exit_msg& msg) {
    fail_all(self, "MCP server `" + name_of(self) + "` was stopped (removed or changed by a "
                       "reload, or parley is stopping)");
    self->state.child.reset();
    self->quit(msg.reason);
  });
  start(self);
  return {
      [self](atom::line, uint64_t gen, std::string& line) {
        if (gen != self->state.generation) return;
        if (self->state.child) self->state.child->consumed(line.size());
        on_line(self, line);
      },
      [self](atom::cut, uint64_t gen, std::string& reason) {
        if (gen == self->state.generation) cut_off(self, reason);
      },
      [self](atom::exited, uint64_t gen, std::string& how) {
        if (gen == self->state.generation) lost(self, how);
      },
      [self](atom::reopen, uint64_t gen) {
        if (gen == self->state.generation && self->state.child) self->state.child->reopen();
      },
      [self](atom::timer, uint64_t gen, int64_t id) { on_timer(self, gen, id); },
      [self](parley::atom::mcp_cancel, std::string& token) { cancel_call(self, token); },
      [self](atom::threads, thread_manager_actor& manager) {
        self->state.options.threads = std::move(manager);
      },
      [self](atom::restart, uint64_t gen) {
        auto& st = self->state;
        if (gen == st.generation && !st.cut_off && st.now == phase::failed) start(self);
      },
      [self](atom::call, std::string& method, std::string& params_text) -> caf::result<std::string> {
        auto& st = self->state;
        auto promise = self->make_response_promise();
        json params = json::parse(params_text, nullptr, false);
        if (params.is_discarded()) params = json::object();
        // Delegated by the hub: who asked is the request's source (a
        // model's turn); the promise took it from the current message.
        auto caller = caf::actor_cast<caf::actor>(promise.source());
        switch (st.now) {
          case phase::connected:
            run_call(self, method, params, promise, caller);
            break;
          case phase::starting:
            if (st.waiting.size() >= max_waiting_calls) {
              promise.deliver(call_error("MCP server `" + name_of(self)
                                         + "` is starting and has too many calls waiting"));
              break;
            }
            st.waiting.push_back({method, std::move(params), promise, caller});
            break;
          case phase::failed:
            promise.deliver(call_error("MCP server `" + name_of(self) + "` is not connected: "
                                       + st.error));
            break;
        }
        return caf::delegated<std::string>{};
      },
  };
}

}  // namespace server_impl

caf::actor spawn_server(caf::event_based_actor* self, server_options options) {
  return self->spawn<caf::linked>(
      [](caf::stateful_actor<server_impl::server_state>* s, server_options o) {
        return server_impl::server_behavior(s, std::move(o));
      },
      std::move(options));
}

}  // namespace parley::mcp
