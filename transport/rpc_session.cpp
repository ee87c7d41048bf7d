#include "transport/rpc_session.hpp"

#include <utility>

#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"
#include "actors/core/passed_rpc_error.hpp"
#include "protocol/ids.hpp"
#include "protocol/jsonrpc_text.hpp"
#include "protocol/notification_text.hpp"
#include "protocol/thread_text.hpp"
#include "transport/approval_requests.hpp"
#include "transport/item_pages.hpp"
#include "transport/not_offered.hpp"
#include "transport/turn_pages.hpp"

namespace parley::rpc {

using protocol::json;
using protocol::request_id;

namespace {

/// Decodes a method's params; the decoders' exceptions stop here.
template <class T>
caf::expected<T> decode_params(const json& params) {
  try {
    return protocol::decode<T>(params);
  } catch (const protocol::decode_error& e) {
    return make_error(errc::invalid_request, std::string{"Invalid request: "} + e.what());
  }
}

/// Experimental fields need `capabilities.experimentalApi` (Codex's gate).
caf::error require_experimental(const protocol::initialize_capabilities& caps, bool used,
                                const char* what) {
  if (used && !caps.experimental_api)
    return make_error(errc::invalid_request,
                      std::string{what} + " requires experimentalApi capability");
  return {};
}

/// A result already written as JSON text (reply_with sends it as it is).
struct result_text {
  std::string json;
};

/// Results written without a DOM where protocol/thread_text.hpp knows them:
/// the replies every thread and turn gets (issue 23).
template <class Result>
constexpr bool has_result_text = std::is_same_v<Result, protocol::thread_session_response>
                                 || std::is_same_v<Result, protocol::turn_start_response>;

/// Methods whose params type is not a struct: `params` may be absent.
bool takes_no_params(const std::string& method) {
  return method == "configRequirements/read" || method == "parley/debug/counts"
         || method == "parley/stats" || method == "config/mcpServer/reload";
}

}  // namespace

struct session::call {
  const request_id& id;
  const json& params;  // an object, or null when absent
};

struct session::outgoing_request {
  decision_sink sink;
  approval_binding binding;
  uint64_t key = 0;
  counted live;  // the runtime's pending_requests
};

session::session(session_config config, runtime_port& runtime, line_sink out)
    : config_(std::move(config)), runtime_(runtime), out_(std::move(out)) {
  roots_.set_home(config_.codex_home);
  roots_.add(config_.default_cwd);
}

session::~session() {
  *alive_ = false;
  for (const auto& cancelled : searches_) cancelled->store(true);  // the walks stop
  for (auto& [id, search] : search_sessions_)
    if (search.running) search.running->store(true);
}

namespace {

/// What a client's tenant adds to a request's params (issue 22): lists are
/// of its tenant's threads (an operator's of every tenant's); a rollout
/// named by its path is the local operator's or an operator's to open.
template <class Params>
caf::error tenant_scope(const tenant_identity& who, Params& p) {
  using P = std::decay_t<Params>;
  if constexpr (std::is_same_v<P, protocol::thread_list_params>
                || std::is_same_v<P, protocol::thread_loaded_list_params>) {
    if (!who.is_operator) p.tenant = who.tenant;
  } else if constexpr (std::is_same_v<P, protocol::thread_resume_params>
                       || std::is_same_v<P, protocol::thread_fork_params>) {
    if (p.path && !who.is_operator && !who.local)
      return make_error(errc::invalid_request,
                        "a rollout path is for the local operator: name the threadId");
  }
  return {};
}

}  // namespace

template <class Params, class Result, class Check>
session::handler session::forwarded(void (runtime_port::*call_runtime)(Params,
                                                                       runtime_port::reply<Result>),
                                    Check check) {
  return [call_runtime, check](session& s, const call& c) {
    auto params = decode_params<Params>(c.params);
    if (!params) return s.reply_error(c.id, params.error());
    if (auto err = check(s.capabilities_, *params)) return s.reply_error(c.id, err);
    if (auto err = tenant_scope(s.config_.identity, *params)) return s.reply_error(c.id, err);
    (s.runtime_.*call_runtime)(std::move(*params), s.reply_as_json<Result>(c.id));
  };
}

const std::map<std::string, session::handler>& session::methods() {
  auto method = [](void (session::*fn)(const call&)) -> handler {
    return [fn](session& s, const call& c) { (s.*fn)(c); };
  };
  auto file = [](const char* name) -> handler {
    return [name](session& s, const call& c) { s.file_method(name, c.id, c.params); };
  };
  auto exec = [](void (session::*fn)(const request_id&, const json&)) -> handler {
    return [fn](session& s, const call& c) { (s.*fn)(c.id, c.params); };
  };
  auto search_session = [](const char* name) -> handler {
    return [name](session& s, const call& c) {
      // Experimental in Codex: only for a client that said it takes those.
      if (auto err = require_experimental(s.capabilities_, true, name))
        return s.reply_error(c.id, err);
      s.search_session(name, c.id, c.params);
    };
  };
  auto configuration = [](const char* name) -> handler {
    return [name](session& s, const call& c) { s.config_method(name, c.id, c.params); };
  };
  // The MCP servers' methods: answered by the runtime's MCP hub, params
  // and result as JSON (actors/mcp/mcp_hub.hpp says which shapes).
  // A tool call names a thread, as in Codex: one nobody has is "thread not
  // found" (-32600); the server's elicitations during the call go to that
  // thread's clients (actors/mcp/elicitation.hpp).
  auto mcp = [](const char* name) -> handler {
    return [name](session& s, const call& c) {
      // A call's turnId is a turn's own (its server's elicitations go to
      // that turn); a client's call has none, whatever it sends.
      auto params = c.params;
      if (params.is_object()) params.erase("turnId");
      auto ask = [&s, name, id = c.id, params] {
        s.runtime_.mcp(name, params, s.reply_with<json>(id, [](const json& r) { return r; }));
      };
      auto t = c.params.is_object() ? c.params.find("threadId") : c.params.end();
      if (std::string{name} != "mcpServer/tool/call" || t == c.params.end() || !t->is_string())
        return ask();
      auto thread_id = t->get<std::string>();
      s.runtime_.thread_tenant(thread_id, [&s, alive = std::weak_ptr<bool>(s.alive_), id = c.id,
                                           thread_id, ask](caf::expected<std::string> owner) {
        if (alive.expired()) return;
        if (!owner) return s.reply_error(id, owner.error());
        if (owner->empty())
          return s.reply_error(id, protocol::rpc_code::invalid_request,
                               "thread not found: " + thread_id);
        ask();
      });
    };
  };
  auto path_needs_experimental = [](const char* what) {
    return [what](const protocol::initialize_capabilities& caps, const auto& p) {
      return require_experimental(caps, p.path.has_value(), what);
    };
  };
  static const std::map<std::string, handler> table = {
      {"initialize", method(&session::initialize)},
      {"thread/start", method(&session::thread_start)},
      {"thread/resume",
       forwarded(&runtime_port::thread_resume, path_needs_experimental("thread/resume.path"))},
      {"thread/fork",
       forwarded(&runtime_port::thread_fork, path_needs_experimental("thread/fork.path"))},
      {"thread/read", forwarded(&runtime_port::thread_read)},
      {"thread/loaded/list", forwarded(&runtime_port::thread_loaded_list)},
      {"thread/list", forwarded(&runtime_port::thread_list)},
      {"thread/unsubscribe", forwarded(&runtime_port::thread_unsubscribe)},
      {"turn/start", forwarded(&runtime_port::turn_start)},
      {"turn/interrupt", method(&session::turn_interrupt)},
      {"thread/shellCommand", method(&session::thread_shell_command)},
      {"turn/steer", forwarded(&runtime_port::turn_steer)},
      {"command/exec", exec(&session::command_exec)},
      {"command/exec/write", exec(&session::command_exec_write)},
      {"command/exec/terminate", exec(&session::command_exec_terminate)},
      {"command/exec/resize", exec(&session::command_exec_resize)},
      {"thread/compact/start", method(&session::thread_compact_start)},
      {"review/start", forwarded(&runtime_port::review_start)},
      {"thread/archive", method(&session::thread_archive)},
      {"thread/unarchive", method(&session::thread_unarchive)},
      {"thread/name/set", method(&session::thread_name_set)},
      {"thread/delete", method(&session::thread_delete)},
      {"thread/turns/list", method(&session::thread_turns_list)},
      {"thread/items/list", method(&session::thread_items_list)},
      {"thread/goal/get", method(&session::thread_goal_get)},
      {"thread/goal/set", method(&session::thread_goal_set)},
      {"thread/goal/clear", method(&session::thread_goal_clear)},
      {"thread/metadata/update", method(&session::thread_metadata_update)},
      {"thread/revert", method(&session::thread_revert)},
      {"thread/inject_items", method(&session::thread_inject_items)},
      {"skills/list", method(&session::skills_list)},
      {"plugin/installed", method(&session::plugin_installed)},
      {"account/read", method(&session::account_read)},
      {"model/list", method(&session::model_list)},
      {"config/read", method(&session::config_read)},
      {"configRequirements/read", method(&session::config_requirements_read)},
      {"parley/debug/counts", method(&session::debug_counts)},
      {"parley/stats", method(&session::stats)},
      {"config/value/write", configuration("config/value/write")},
      {"config/batchWrite", configuration("config/batchWrite")},
      {"modelProvider/list", configuration("modelProvider/list")},
      {"modelProvider/capabilities/read", configuration("modelProvider/capabilities/read")},
      {"modelProvider/config/write", configuration("modelProvider/config/write")},
      {"permissionProfile/list", configuration("permissionProfile/list")},
      {"experimentalFeature/list", configuration("experimentalFeature/list")},
      {"experimentalFeature/enablement/set", configuration("experimentalFeature/enablement/set")},
      {"hooks/list", configuration("hooks/list")},
      {"mcpServerStatus/list", mcp("mcpServerStatus/list")},
      {"mcpServer/tool/call", mcp("mcpServer/tool/call")},
      {"mcpServer/resource/read", mcp("mcpServer/resource/read")},
      {"config/mcpServer/reload", mcp("config/mcpServer/reload")},
      {"mcpServer/oauth/login", mcp("mcpServer/oauth/login")},
      {"fs/readFile", file("fs/readFile")},
      {"fs/writeFile", file("fs/writeFile")},
      {"fs/createDirectory", file("fs/createDirectory")},
      {"fs/getMetadata", file("fs/getMetadata")},
      {"fs/readDirectory", file("fs/readDirectory")},
      {"fs/remove", file("fs/remove")},
      {"fs/copy", file("fs/copy")},
      {"fs/watch", file("fs/watch")},
      {"fs/unwatch", file("fs/unwatch")},
      {"fuzzyFileSearch", [](session& s, const call& c) { s.fuzzy_file_search(c.id, c.params); }},
      {"fuzzyFileSearch/sessionStart", search_session("fuzzyFileSearch/sessionStart")},
      {"fuzzyFileSearch/sessionUpdate", search_session("fuzzyFileSearch/sessionUpdate")},
      {"fuzzyFileSearch/sessionStop", search_session("fuzzyFileSearch/sessionStop")},
  };
  return table;
}

// -- replies -----------------------------------------------------------------

void session::reply(const request_id& id, const json& result) {
  auto line = protocol::encode_response(id, result);
  unmask(id, line);
  write(std::move(line));
}

void session::reply_text(const request_id& id, const std::string& result_json) {
  auto line = protocol::encode_response_raw(id, result_json);
  unmask(id, line);
  write(std::move(line));
}

void session::reply_error(const request_id& id, int code, const std::string& message) {
  auto line = protocol::encode_error(id, code, message);
  unmask(id, line);
  write(std::move(line));
}

void session::unmask(const request_id& id, std::string& line) {
  if (masked_.empty()) return;
  auto m = masked_.find(json(id).dump());
  if (m == masked_.end()) return;
  const auto& [fresh, named] = m->second;
  for (auto at = line.find(fresh); at != std::string::npos; at = line.find(fresh, at + named.size()))
    line.replace(at, fresh.size(), named);
  masked_.erase(m);
}

void session::reply_error(const request_id& id, const caf::error& err) {
  if (auto passed = passed_rpc_error_of(err)) {
    // A peer's error (an MCP server's answer to mcpServer/tool/call): as
    // the peer gave it, data included, as Codex passes it.
    json error = {{"code", passed->code}, {"message", passed->message}};
    if (!passed->data.empty()) error["data"] = json::parse(passed->data, nullptr, false);
    auto line = protocol::dump_line(json{{"id", id}, {"error", std::move(error)}});
    unmask(id, line);
    return write(std::move(line));
  }
  reply_error(id, rpc_code_of(err), rpc_message_of(err));
}

template <class Result, class Encode>
runtime_port::reply<Result> session::reply_with(const request_id& id, Encode encode) {
  return [this, alive = std::weak_ptr<bool>(alive_), token = answer_token_, id,
          encode = std::move(encode)](caf::expected<Result> r) {
    if (alive.expired()) return;
    [&] {
      if (!r) return reply_error(id, r.error());
      // `encode` gives the result's JSON, or (caf::expected) an error of its own.
      auto encoded = encode(*r);
      if constexpr (std::is_same_v<decltype(encoded), json>) {
        reply(id, encoded);
      } else if constexpr (std::is_same_v<decltype(encoded), result_text>) {
        reply_text(id, encoded.json);
      } else if (encoded) {
        reply(id, *encoded);
      } else {
        reply_error(id, encoded.error());
      }
    }();
    on_answered();
  };
}

template <class Result>
runtime_port::reply<Result> session::reply_as_json(const request_id& id) {
  return reply_with<Result>(id, [this](const Result& r) {
    // A thread this session started, resumed or forked: its roots are fs/*'s.
    if constexpr (std::is_same_v<Result, protocol::thread_session_response>) learn_roots(r);
    if constexpr (has_result_text<Result>) {
      result_text text;
      text.json.reserve(1024);
      // Anything thread_text does not write (an item kind, bad UTF-8): nlohmann's.
      if (!protocol::append_result(text.json, r)) text.json = protocol::dump_line(json(r));
      return text;
    } else {
      return json(r);
    }
  });
}

// -- client -> server --------------------------------------------------------

void session::write(std::string line) {
  if (muted_) return;
  PARLEY_TRACE("wire connection={} out={}", config_.label, line);
  out_(std::move(line));
}

void session::replay_initialize(std::string_view line) {
  muted_ = true;
  on_line(line);
  muted_ = false;
}

void session::on_line(std::string_view line) {
  if (given_up_) return;
  // A request before this one waits for the router or the tenant gate: the
  // lines after it wait too, so the client's requests keep their order. A
  // client's answer to a server request (a line without a method) does not:
  // it overtakes the held requests as it overtook them on the way in
  // (line_reader.hpp's send_line), so a decision never waits for another
  // request's round trip to the thread manager (issue 23: over WebSocket,
  // where the gate asks before every turn/start, answers waited seconds).
  //
  // Requests also wait here while `max_unanswered` of this client's
  // requests are still to be answered: each one waits in the connection
  // actor's table of response handlers, which CAF 0.17 keeps in a flat map
  // whose lookup and erase are linear, so a client that sends its requests
  // all at once made each answer cost as much as all those before it
  // (100,000 thread/starts pipelined took 13-30 s). The next wait for an
  // answer, in order; answers to server requests still pass.
  if (line.find("\"method\"") != std::string_view::npos
      && (holding_ || !held_.empty() || at_capacity())) {
    held_.emplace_back(line);
    return;
  }
  handle_line(line);
}

void session::handle_line(std::string_view line) {
  PARLEY_TRACE("wire connection={} in={}", config_.label, line);
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank line
  current_line_ = line;
  auto parsed = protocol::parse_message(line);
  if (auto* err = std::get_if<protocol::envelope_error>(&parsed)) {
    PARLEY_WARN("connection event=bad_line reason=\"{}\" bytes={}", err->reason, line.size());
    return;
  }
  auto& m = std::get<protocol::incoming_message>(parsed);
  if (m.rejected) {  // e.g. nested too deep: answered, never dispatched
    PARLEY_WARN("connection event=rejected_request reason=\"{}\" bytes={}", m.rejected->message,
                line.size());
    return reply_error(m.id, m.rejected->code, m.rejected->message);
  }
  switch (m.type) {
    case protocol::incoming_message::kind::request:
      on_request(m);
      return;
    case protocol::incoming_message::kind::notification:
      PARLEY_DEBUG("connection event=client_notification method={}", m.method);
      return;  // `initialized` and anything else: nothing to do
    case protocol::incoming_message::kind::response:
    case protocol::incoming_message::kind::error_response:
      on_response(m);
      return;
  }
}

void session::on_request(const protocol::incoming_message& m) {
  auto& table = methods();
  auto i = table.find(m.method);
  if (i == table.end()) {
    if (auto reason = not_offered_reason(m.method)) {
      // A method of Codex's that parley will never offer: says so, and why.
      reply_error(m.id, not_offered_code, not_offered_message(m.method, *reason));
      return;
    }
    // -32601: not (yet) here. Clients (the TUI) take it as "not supported
    // here" and go on.
    reply_error(m.id, protocol::rpc_code::method_not_found,
                "method not found: `" + m.method + "` is not supported by parley");
    return;
  }
  if (!initialized_ && m.method != "initialize") {
    reply_error(m.id, protocol::rpc_code::invalid_request, "Not initialized");
    return;
  }
  if (!m.has_params && !takes_no_params(m.method)) {
    reply_error(m.id, protocol::rpc_code::invalid_request,
                "Invalid request: missing field `params`");
    return;
  }
  if (config_.router && m.method != "initialize" && route(m)) return;
  run_here(m);
}

void session::run_here(const protocol::incoming_message& m) {
  if (!gate(m)) dispatch(m);
}

bool session::gate(const protocol::incoming_message& m) {
  if (config_.identity.is_operator || !m.params.is_object()) return false;
  auto t = m.params.find("threadId");
  if (t == m.params.end() || !t->is_string()) return false;
  auto thread_id = t->get<std::string>();
  // A malformed id is answered by its method; one of ours needs no asking.
  if (!protocol::is_uuid(thread_id) || own_threads_.count(thread_id)) return false;
  holding_ = true;
  runtime_.thread_tenant(thread_id, [this, alive = std::weak_ptr<bool>(alive_), m,
                                     thread_id](caf::expected<std::string> owner) {
    if (alive.expired() || given_up_) return;
    if (!owner) {
      reply_error(m.id, owner.error());  // fail closed: whose it is is not known
    } else if (owner->empty()) {
      dispatch(m);  // nobody's: its method answers as for any unknown thread
    } else if (config_.identity.sees(*owner)) {
      if (own_threads_.size() >= 4096) own_threads_.clear();  // a cache, bounded
      own_threads_.insert(thread_id);
      dispatch(m);
    } else {
      PARLEY_INFO("connection event=foreign_thread connection={} tenant={} method={}",
                  config_.label, config_.identity.tenant, m.method);
      auto masked = m;
      auto fresh = protocol::new_uuid_v7();
      masked.params["threadId"] = fresh;
      masked_[json(m.id).dump()] = {fresh, thread_id};
      dispatch(masked);
    }
    release_held();
  });
  return true;
}

void session::dispatch(const protocol::incoming_message& m) {
  methods().at(m.method)(*this, call{m.id, m.params});
}

bool session::route(const protocol::incoming_message& m) {
  std::string thread_id;
  bool start = m.method == "thread/start";
  if (!start) {
    auto t = m.params.is_object() ? m.params.find("threadId") : m.params.end();
    if (!m.params.is_object() || t == m.params.end() || !t->is_string()) return false;
    thread_id = t->get<std::string>();
    // A malformed id is answered here, as a local request would be.
    if (!protocol::is_uuid(thread_id)) return false;
  }
  holding_ = true;
  auto alive = alive_;
  auto line = std::string{current_line_};
  auto id_json = json(m.id).dump();
  auto on_node = [this, alive, m, line = std::move(line), id_json, start](
                     std::string thread, std::string node) mutable {
    if (!*alive || given_up_) return;
    if (node.empty()) {
      assigned_thread_id_ = start ? thread : std::string{};
      holding_ = false;
      run_here(m);  // the tenant gate may hold the lines after it again
      assigned_thread_id_.clear();
      if (holding_) return;
    } else {
      if (start) {  // the owner creates the thread under the placed id
        auto forwarded = json::parse(line, nullptr, false);
        if (forwarded.is_object() && forwarded["params"].is_object()) {
          forwarded["params"]["parley.threadId"] = thread;
          line = forwarded.dump();
        }
      }
      config_.router->forward(node, thread, id_json, std::move(line));
    }
    release_held();
  };
  if (start)
    config_.router->place(std::move(on_node));
  else
    config_.router->locate(thread_id, [on_node, thread_id](std::string node) mutable {
      on_node(thread_id, std::move(node));
    });
  return true;
}

void session::release_held(long answering) {
  holding_ = false;
  bool outer = std::exchange(releasing_, true);
  while (!holding_ && unanswered() - answering < max_unanswered && !held_.empty()) {
    auto next = std::move(held_.front());
    held_.pop_front();
    handle_line(next);
  }
  releasing_ = outer;
  if (!holding_ && held_.empty() && after_held_) std::exchange(after_held_, nullptr)();
}

void session::on_answered() {
  // Called from an answer's callback, whose own token (1) still counts. An
  // answer given while the held lines are being handled (a runtime that
  // answers at once) leaves them to that loop, which sees the room it made.
  if (releasing_ || holding_ || held_.empty()) return;
  if (unanswered() - 1 < max_unanswered) release_held(1);
}

size_t session::give_up() {
  given_up_ = true;
  auto dropped = held_.size();
  held_.clear();
  after_held_ = nullptr;
  return dropped;
}

void session::after_held(std::function<void()> then) {
  if (!holding_ && held_.empty())
    then();
  else
    after_held_ = std::move(then);
}

void session::thread_start(const call& c) {
  auto params = decode_params<protocol::thread_start_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  if (auto err = require_experimental(capabilities_, params->dynamic_tools.has_value(),
                                      "thread/start.dynamicTools"))
    return reply_error(c.id, err);
  // Only the router of this node, or a peer node, picks a thread's id.
  params->assigned_id = assigned_thread_id_;
  params->tenant = config_.identity.tenant;
  if (config_.cluster_peer && c.params.is_object()) {
    auto a = c.params.find("parley.threadId");
    if (a != c.params.end() && a->is_string() && protocol::is_uuid(a->get<std::string>()))
      params->assigned_id = a->get<std::string>();
  }
  runtime_.thread_start(std::move(*params),
                        reply_as_json<protocol::thread_session_response>(c.id));
}

void session::on_eof() {
  if (closed_) return;
  closed_ = true;
  if (config_.router) config_.router->client_closed();
  PARLEY_INFO("connection event=input_closed pending_requests={}", outgoing_.size());
  // Nobody can answer any more: every pending approval resolves as cancelled.
  auto pending = std::move(outgoing_);
  outgoing_.clear();
  request_of_key_.clear();
  for (auto& [rid, req] : pending) {
    notify(protocol::server_request_resolved{req->binding.thread_id, request_id{rid}});
    req->sink(make_error(errc::transport_closed, "client input closed"));
  }
}

// -- method handlers ---------------------------------------------------------

void session::initialize(const call& c) {
  auto params = decode_params<protocol::initialize_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  if (initialized_) {
    reply_error(c.id, protocol::rpc_code::invalid_request, "Already initialized");
    return;
  }
  initialized_ = true;
  capabilities_ = params->capabilities;
  opted_out_.insert(capabilities_.opt_out_notification_methods.begin(),
                    capabilities_.opt_out_notification_methods.end());
  protocol::initialize_response r;
  const auto& client = params->client;
  r.user_agent = client.name + "/" + config_.cli_version + " (parley; Linux) (" + client.name + "; "
                 + client.version + ")";
  r.codex_home = config_.codex_home;
  reply(c.id, json(r));
  if (config_.router) config_.router->client_initialized(std::string{current_line_});
  PARLEY_INFO("connection event=initialized client={} version={}", client.name, client.version);
}

void session::turn_interrupt(const call& c) {
  auto params = decode_params<protocol::turn_interrupt_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  runtime_.turn_interrupt(std::move(*params),
                          reply_with<atom::ok>(c.id, [](atom::ok) { return json::object(); }));
}

void session::thread_shell_command(const call& c) {
  auto params = decode_params<protocol::thread_shell_command_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  runtime_.thread_shell_command(
      std::move(*params), reply_with<atom::ok>(c.id, [](atom::ok) { return json::object(); }));
}

void session::thread_compact_start(const call& c) {
  auto params = decode_params<protocol::thread_id_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  runtime_.thread_compact(std::move(*params),
                          reply_with<atom::ok>(c.id, [](atom::ok) { return json::object(); }));
}

void session::thread_archive(const call& c) {
  auto params = decode_params<protocol::thread_id_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  runtime_.thread_archive(std::move(*params), true,
                          reply_with<protocol::thread>(c.id, [](auto&) { return json::object(); }));
}

void session::thread_unarchive(const call& c) {
  auto params = decode_params<protocol::thread_id_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  runtime_.thread_archive(std::move(*params), false,
                          reply_with<protocol::thread>(c.id, [](const protocol::thread& t) {
                            return json{{"thread", t}};
                          }));
}

void session::thread_delete(const call& c) {
  auto params = decode_params<protocol::thread_id_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  runtime_.thread_delete(std::move(*params),
                         reply_with<atom::ok>(c.id, [](atom::ok) { return json::object(); }));
}

void session::thread_name_set(const call& c) {
  auto params = decode_params<protocol::thread_name_set_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  runtime_.thread_name_set(std::move(*params),
                           reply_with<atom::ok>(c.id, [](atom::ok) { return json::object(); }));
}

// thread/metadata/update, thread/revert, thread/inject_items (checks in
// protocol/thread_extras.cpp). As in Codex, a metadata update is checked
// before its thread is looked for, injected items after.
void session::thread_metadata_update(const call& c) {
  auto params = decode_params<protocol::thread_metadata_update_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  if (!protocol::is_uuid(params->thread_id))
    return reply_error(c.id, make_error(errc::invalid_request,
                                        "invalid thread id: " + params->thread_id));
  if (auto why = protocol::check_metadata_update(*params))
    return reply_error(c.id, make_error(errc::invalid_request, *why));
  thread_edit e;
  e.what = thread_edit::kind::metadata;
  e.thread_id = params->thread_id;
  e.git = *params->git;
  runtime_.thread_edit(std::move(e), reply_with<thread_edit_answer>(
                                         c.id, [](const thread_edit_answer& a) {
                                           return json{{"thread", a.thread}};
                                         }));
}

void session::thread_revert(const call& c) {
  auto params = decode_params<protocol::thread_revert_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  thread_edit e;
  e.what = thread_edit::kind::revert;
  e.thread_id = params->thread_id;
  e.before_turn_id = params->before_turn_id;
  runtime_.thread_edit(std::move(e), reply_with<thread_edit_answer>(
                                         c.id, [](const thread_edit_answer& a) {
                                           return json{{"thread", a.thread},
                                                       {"turnsBackwardsCursor",
                                                        protocol::or_null(a.turns_cursor)},
                                                       {"itemsBackwardsCursor",
                                                        protocol::or_null(a.items_cursor)}};
                                         }));
}

void session::thread_inject_items(const call& c) {
  auto params = decode_params<protocol::thread_inject_items_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  thread_edit e;
  e.what = thread_edit::kind::inject;
  e.thread_id = params->thread_id;
  e.items = std::move(params->items);
  runtime_.thread_edit(std::move(e), reply_with<thread_edit_answer>(
                                         c.id, [](const thread_edit_answer&) {
                                           return json::object();
                                         }));
}

// thread/turns/list and thread/items/list: a page of the thread's turns as
// thread/read gives them (loaded or not).
template <class Params, class Pager>
void session::page_of_thread(const call& c, Pager pager) {
  auto params = decode_params<Params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  protocol::thread_read_params read{params->thread_id, true};
  runtime_.thread_read(std::move(read),
                       reply_with<protocol::thread_read_response>(
                           c.id,
                           [params = std::move(*params), pager](
                               const protocol::thread_read_response& r) -> caf::expected<json> {
                             auto page = pager(r.thread_.turns, params);
                             if (!page) return std::move(page.error());
                             return json(*page);
                           }));
}

void session::thread_turns_list(const call& c) {
  page_of_thread<protocol::thread_turns_list_params>(
      c, [](const auto& turns, const auto& p) { return page_turns(turns, p); });
}

void session::thread_items_list(const call& c) {
  page_of_thread<protocol::thread_items_list_params>(
      c, [](const auto& turns, const auto& p) { return page_items(turns, p); });
}

void session::thread_goal_get(const call& c) {
  auto params = decode_params<protocol::thread_id_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  goal_request r;
  r.params.thread_id = params->thread_id;
  runtime_.thread_goal(std::move(r), reply_with<goal_answer>(c.id, [](const goal_answer& a) {
    return json{{"goal", protocol::or_null(a.goal)}};
  }));
}

void session::thread_goal_set(const call& c) {
  auto params = decode_params<protocol::thread_goal_set_params>(c.params);
  if (!params) return reply_error(c.id, params.error());
  goal_request r;
  r.what = goal_request::kind::set;
  r.params = std::move(*params);
  runtime_.thread_goal(std::move(r), reply_with<goal_answer>(c.id, [](const goal_answer& a) {
    return json{{"goal", protocol::or_null(a.goal)}};
  }));
}

void session::thread_goal_clear(const call& c) {
  auto params = decode_params<protocol::thread_goal_set_params>(c.params);  // threadId, origin
  if (!params) return reply_error(c.id, params.error());
  goal_request r;
  r.what = goal_request::kind::clear;
  r.params.thread_id = params->thread_id;
  runtime_.thread_goal(std::move(r), reply_with<goal_answer>(c.id, [](const goal_answer& a) {
    return json{{"cleared", a.cleared}};
  }));
}

// Skills and plugins are Codex features parley does not have: the honest
// answer is an empty list, not an error (the TUI shows a banner for those).
void session::skills_list(const call& c) {
  reply(c.id, json{{"data", json::array()}});
}

void session::plugin_installed(const call& c) {
  reply(c.id, json{{"marketplaces", json::array()}, {"marketplaceLoadErrors", json::array()}});
}

void session::account_read(const call& c) {
  reply(c.id, protocol::account_read_result());
}

void session::model_list(const call& c) {
  reply(c.id, protocol::model_list_result(config_.model_id));
}

void session::config_read(const call& c) {
  reply(c.id, protocol::config_read_result());
}

void session::config_requirements_read(const call& c) {
  reply(c.id, protocol::config_requirements_read_result());
}

void session::debug_counts(const call& c) {
  runtime_.debug_counts(reply_with<runtime_counts>(c.id, [](const runtime_counts& n) {
    return json{{"conversations", n.conversations}, {"turns", n.turns},
                {"approvals", n.approvals},         {"execs", n.execs},
                {"pendingAsks", n.pending_asks},    {"pendingRequests", n.pending_requests},
                {"processes", n.processes}};
  }));
}

/// The thread index's catch-up at start: lists answer meanwhile, from what
/// is indexed so far.
static json index_sync_json(const index_sync_progress& p) {
  static constexpr const char* phases[] = {"ready", "rebuilding", "reconciling", "opening"};
  int phase = p.phase.load();
  return {{"state", phases[phase >= 0 && phase <= 3 ? phase : 0]},
          {"seen", p.seen.load()},
          {"read", p.read.load()},
          {"removed", p.removed.load()}};
}

/// One holder's usage against its limits (0: none), as parley/stats shows it.
static json usage_json(const usage_counts& used, const usage_limits& limits, bool tenant) {
  json out = json::object();
  for (auto [kind, name] : {std::pair{usage_kind::loaded_threads, "loadedThreads"},
                            std::pair{usage_kind::running_turns, "runningTurns"},
                            std::pair{usage_kind::pending_approvals, "pendingApprovals"}})
    out[name] = {{"used", used[kind]},
                 {"limit", tenant ? limits.of_tenant(kind) : limits.of_connection(kind)}};
  return out;
}

/// Usage by tenant (an operator sees every tenant holding something, a
/// tenant's client only its own: tenants never learn of each other) and
/// this connection's.
static json limits_json(const usage_table& usage, const usage_limits& limits,
                        const tenant_identity& who, uint64_t connection) {
  json tenants = json::object();
  tenants[who.tenant] = usage_json(usage.of_tenant(who.tenant), limits, true);
  if (who.is_operator)
    for (const auto& [tenant, used] : usage.tenants())
      tenants[tenant] = usage_json(used, limits, true);
  return {{"tenants", std::move(tenants)},
          {"connection", usage_json(usage.of_connection(connection), limits, false)}};
}

void session::stats(const call& c) {
  json out{{"approvals", runtime_.approval_stats()}};
  if (config_.telemetry) {
    out["store"] = {{"index", index_sync_json(config_.telemetry->index_sync)},
                    {"writes", config_.telemetry->store_writes}};
    out["model"] = config_.telemetry->model;
    out["limits"] = limits_json(*config_.telemetry->usage,
                                config_.runtime ? config_.runtime->limits : usage_limits{},
                                config_.identity, config_.connection_id);
    // What every client (stdio's and the listeners') has not read yet: the
    // figure backpressure bounds (issue 22).
    out["connections"] = {
        {"queuedBytes", config_.telemetry->connections.queued_bytes.load(std::memory_order_relaxed)}};
  }
  if (!config_.router) return reply(c.id, out);
  // A cluster node: this node's approvals as before, and every member's
  // figures under "cluster" (a member that did not answer says so there).
  config_.router->cluster_stats([this, alive = std::weak_ptr<bool>(alive_), id = c.id,
                                 out = std::move(out)](bool ok, std::string text) mutable {
    if (alive.expired()) return;
    auto cluster = ok ? json::parse(text, nullptr, false) : json{{"error", text}};
    out["cluster"] = cluster.is_discarded() ? json{{"error", "malformed figures"}} : cluster;
    reply(id, out);
  });
}

// -- runtime -> client -------------------------------------------------------

void session::notify(const protocol::notification& n) {
  auto method = protocol::method_of(n);
  if (opted_out_.count(method) > 0) return;
  // Its params as text: the shapes notification_text knows without a DOM.
  write(protocol::encode_notification_raw(method, protocol::params_text(n), protocol::unix_ms()));
}

void session::notify(const outgoing_event& e) {
  if (e.wire_params.empty()) return notify(e.body);
  auto method = protocol::method_of(e.body);
  if (opted_out_.count(method) > 0) return;
  write(protocol::encode_notification_raw(method, e.wire_params, protocol::unix_ms()));
}

void session::notify_json(const char* method, const std::string& params_json) {
  if (!initialized_ || closed_ || opted_out_.count(method) > 0) return;
  write(protocol::encode_notification_raw(method, params_json, protocol::unix_ms()));
}

void session::ask(const approval_ask& ask, decision_sink sink) {
  if (closed_) {
    sink(make_error(errc::transport_closed, "client input closed"));
    return;
  }
  auto rid = config_.next_request_id();
  auto shown = approval_request_for(ask, capabilities_.legacy_approvals);
  auto req = std::make_unique<outgoing_request>();
  req->live = count_live(config_.telemetry, &live_counters::pending_requests);
  req->sink = std::move(sink);
  req->binding = std::move(shown.binding);
  req->key = ask.key;
  outgoing_.emplace(rid, std::move(req));
  request_of_key_.emplace(ask.key, rid);
  PARLEY_DEBUG("connection event=ask id={} key={} method={} initialized={}", rid, ask.key,
               shown.method, initialized_);
  if (!shown.params_text.empty())
    write(protocol::encode_request_raw(request_id{rid}, shown.method, shown.params_text));
  else
    write(protocol::encode_request(request_id{rid}, shown.method, shown.params));
}

void session::withdraw(uint64_t key) {
  auto k = request_of_key_.find(key);
  if (k == request_of_key_.end()) return;  // already answered
  auto rid = k->second;
  request_of_key_.erase(k);
  auto i = outgoing_.find(rid);
  if (i == outgoing_.end()) return;
  auto req = std::move(i->second);
  outgoing_.erase(i);
  notify(protocol::server_request_resolved{req->binding.thread_id, request_id{rid}});
  req->sink(make_error(errc::withdrawn, "approval withdrawn"));
}

/// The client answered request `rid` (a result or an error).
void session::on_response(const protocol::incoming_message& m) {
  auto* rid = std::get_if<int64_t>(&m.id.value);
  // An answer to another node's request goes there (its id says which).
  if (rid && config_.router && config_.router->forward_answer(*rid, std::string{current_line_}))
    return;
  auto i = rid ? outgoing_.find(*rid) : outgoing_.end();
  if (i == outgoing_.end()) {
    config_.on_refused_reply();
    PARLEY_WARN("connection event=unknown_response id={} ignored (late, duplicate or foreign)",
                m.id.to_string());
    return;
  }
  bool is_result = m.type == protocol::incoming_message::kind::response;
  if (is_result) {
    if (auto mismatch = binding_mismatch(i->second->binding, m.result)) {
      // Not applied: the request stays pending for the right answer (or its deadline).
      config_.on_refused_reply();
      PARLEY_WARN("connection event=foreign_decision id={} thread={} refused: {}", *rid,
                  i->second->binding.thread_id, *mismatch);
      return;
    }
  }
  auto req = std::move(i->second);
  outgoing_.erase(i);
  request_of_key_.erase(req->key);
  // The prompt is closed before anything the decision causes.
  notify(protocol::server_request_resolved{req->binding.thread_id, m.id});
  if (!is_result) {
    PARLEY_INFO("connection event=approval_error_reply id={} code={} message={}", *rid,
                m.error.code, m.error.message);
    req->sink(decision_of_error_reply(req->binding, m.error.message));
    return;
  }
  auto decision = decode_decision(req->binding, m.result);
  if (!decision)
    PARLEY_WARN("connection event=malformed_decision id={} error={}", *rid,
                message_of(decision.error()));
  req->sink(std::move(decision));
}

}  // namespace parley::rpc
