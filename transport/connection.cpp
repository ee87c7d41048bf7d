#include "transport/connection.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "actors/approval_stats.hpp"
#include "actors/handlers.hpp"
#include "protocol/ids.hpp"

namespace parley {

namespace {

using self_ptr = connection_actor::stateful_pointer<connection_state>;
using protocol::json;
using protocol::request_id;

constexpr auto call_timeout = std::chrono::seconds(120);

void write(self_ptr self, std::string line) { self->send(self->state.out, std::move(line)); }

void reply(self_ptr self, const request_id& id, const json& result) {
  write(self, protocol::encode_response(id, result));
}

void reply_error(self_ptr self, const request_id& id, int code, const std::string& message) {
  write(self, protocol::encode_error(id, code, message));
}

void reply_error(self_ptr self, const request_id& id, const caf::error& err) {
  reply_error(self, id, rpc_code_of(err), message_of(err));
}

void notify(self_ptr self, const protocol::notification& n) {
  auto method = protocol::method_of(n);
  if (self->state.opted_out.count(method) > 0) return;
  write(self, protocol::encode_notification(method, protocol::params_of(n), protocol::unix_ms()));
}

void notify(self_ptr self, const outgoing_event& e) {
  if (e.wire_params.empty()) return notify(self, e.body);
  auto method = protocol::method_of(e.body);
  if (self->state.opted_out.count(method) > 0) return;
  write(self, protocol::encode_notification_raw(method, e.wire_params, protocol::unix_ms()));
}

client_actor as_client(self_ptr self) { return caf::actor_cast<client_actor>(self); }

/// Sends a typed request to the thread manager and replies with its result.
template <class Result, class... Ts>
void forward(self_ptr self, const request_id& id, Ts&&... xs) {
  self->request(self->state.threads, call_timeout, std::forward<Ts>(xs)...)
      .then([self, id](Result& r) { reply(self, id, json(r)); },
            [self, id](caf::error& err) { reply_error(self, id, err); });
}

// -- methods -----------------------------------------------------------------

/// A request refused before it reaches the runtime; the message is sent as is.
class refused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Experimental fields need `capabilities.experimentalApi` (Codex's gate).
void require_experimental(self_ptr self, bool used, const char* what) {
  if (used && !self->state.capabilities.experimental_api)
    throw refused(std::string{what} + " requires experimentalApi capability");
}

struct call {
  const request_id& id;
  const json& params;  // an object, or null when absent
};

using method_fn = std::function<void(self_ptr, const call&)>;

void initialize(self_ptr self, const call& c) {
  auto params = protocol::decode<protocol::initialize_params>(c.params);
  auto& st = self->state;
  if (st.initialized) {
    reply_error(self, c.id, protocol::rpc_code::invalid_request, "Already initialized");
    return;
  }
  st.initialized = true;
  st.capabilities = params.capabilities;
  st.opted_out.insert(params.capabilities.opt_out_notification_methods.begin(),
                      params.capabilities.opt_out_notification_methods.end());
  const auto& cfg = *st.options.config;
  protocol::initialize_response r;
  r.user_agent = params.client.name + "/" + cfg.cli_version + " (parley; Linux) ("
                 + params.client.name + "; " + params.client.version + ")";
  r.codex_home = cfg.home;
  reply(self, c.id, json(r));
  PARLEY_INFO("connection event=initialized client={} version={}", params.client.name,
              params.client.version);
}

const std::map<std::string, method_fn>& methods() {
  static const std::map<std::string, method_fn> table = {
      {"initialize", initialize},
      {"thread/start",
       [](self_ptr self, const call& c) {
         forward<protocol::thread_session_response>(
             self, c.id, atom::open::value, protocol::decode<protocol::thread_start_params>(c.params),
             as_client(self));
       }},
      {"thread/read",
       [](self_ptr self, const call& c) {
         forward<protocol::thread_read_response>(
             self, c.id, atom::read::value, protocol::decode<protocol::thread_read_params>(c.params));
       }},
      {"thread/loaded/list",
       [](self_ptr self, const call& c) {
         forward<protocol::thread_loaded_list_response>(
             self, c.id, atom::loaded::value,
             protocol::decode<protocol::thread_loaded_list_params>(c.params));
       }},
      {"turn/start",
       [](self_ptr self, const call& c) {
         forward<protocol::turn_start_response>(
             self, c.id, atom::turn_start::value,
             protocol::decode<protocol::turn_start_params>(c.params), as_client(self));
       }},
      {"turn/interrupt",
       [](self_ptr self, const call& c) {
         auto params = protocol::decode<protocol::turn_interrupt_params>(c.params);
         self->request(self->state.threads, call_timeout, atom::interrupt::value, std::move(params))
             .then([self, id = c.id](atom::ok) { reply(self, id, json::object()); },
                   [self, id = c.id](caf::error& err) { reply_error(self, id, err); });
       }},
      {"thread/resume",
       [](self_ptr self, const call& c) {
         auto params = protocol::decode<protocol::thread_resume_params>(c.params);
         require_experimental(self, params.path.has_value(), "thread/resume.path");
         forward<protocol::thread_session_response>(self, c.id, atom::resume::value,
                                                    std::move(params), as_client(self));
       }},
      {"thread/fork",
       [](self_ptr self, const call& c) {
         auto params = protocol::decode<protocol::thread_fork_params>(c.params);
         require_experimental(self, params.path.has_value(), "thread/fork.path");
         forward<protocol::thread_session_response>(self, c.id, atom::fork::value,
                                                    std::move(params), as_client(self));
       }},
      {"thread/list",
       [](self_ptr self, const call& c) {
         forward<protocol::thread_list_response>(
             self, c.id, atom::list::value, protocol::decode<protocol::thread_list_params>(c.params));
       }},
      {"thread/archive",
       [](self_ptr self, const call& c) {
         self->request(self->state.threads, call_timeout, atom::archive::value,
                       protocol::decode<protocol::thread_id_params>(c.params), true, as_client(self))
             .then([self, id = c.id](protocol::thread&) { reply(self, id, json::object()); },
                   [self, id = c.id](caf::error& err) { reply_error(self, id, err); });
       }},
      {"thread/unarchive",
       [](self_ptr self, const call& c) {
         self->request(self->state.threads, call_timeout, atom::archive::value,
                       protocol::decode<protocol::thread_id_params>(c.params), false, as_client(self))
             .then([self, id = c.id](protocol::thread& t) { reply(self, id, json{{"thread", t}}); },
                   [self, id = c.id](caf::error& err) { reply_error(self, id, err); });
       }},
      {"thread/name/set",
       [](self_ptr self, const call& c) {
         self->request(self->state.threads, call_timeout, atom::rename::value,
                       protocol::decode<protocol::thread_name_set_params>(c.params), as_client(self))
             .then([self, id = c.id](atom::ok) { reply(self, id, json::object()); },
                   [self, id = c.id](caf::error& err) { reply_error(self, id, err); });
       }},
      {"thread/unsubscribe",
       [](self_ptr self, const call& c) {
         forward<protocol::thread_unsubscribe_response>(
             self, c.id, atom::unsub::value, protocol::decode<protocol::thread_id_params>(c.params),
             as_client(self));
       }},
      {"account/read",
       [](self_ptr self, const call& c) { reply(self, c.id, protocol::account_read_result()); }},
      {"model/list",
       [](self_ptr self, const call& c) {
         reply(self, c.id, protocol::model_list_result(self->state.options.config->model_id));
       }},
      {"config/read",
       [](self_ptr self, const call& c) { reply(self, c.id, protocol::config_read_result()); }},
      {"configRequirements/read",
       [](self_ptr self, const call& c) {
         reply(self, c.id, protocol::config_requirements_read_result());
       }},
      {"parley/debug/counts",
       [](self_ptr self, const call& c) {
         self->request(self->state.threads, call_timeout, atom::stats::value)
             .then(
                 [self, id = c.id](runtime_counts& n) {
                   reply(self, id,
                         json{{"conversations", n.conversations},
                              {"turns", n.turns},
                              {"approvals", n.approvals},
                              {"execs", n.execs},
                              {"pendingAsks", n.pending_asks},
                              {"pendingRequests", n.pending_requests},
                              {"processes", n.processes}});
                 },
                 [self, id = c.id](caf::error& err) { reply_error(self, id, err); });
       }},
      {"parley/stats",
       [](self_ptr self, const call& c) {
         reply(self, c.id, json{{"approvals", approval_telemetry().snapshot()}});
       }},
  };
  return table;
}

/// Methods whose params type is not a struct: `params` may be absent.
bool takes_no_params(const std::string& method) {
  return method == "configRequirements/read" || method == "parley/debug/counts"
         || method == "parley/stats";
}

std::string unknown_method_message(const std::string& method) {
  std::string msg = "Invalid request: unknown variant `" + method + "`, expected one of ";
  bool first = true;
  for (const auto& [name, fn] : methods()) {
    if (!first) msg += ", ";
    msg += "`" + name + "`";
    first = false;
  }
  return msg;
}

void on_request(self_ptr self, const protocol::incoming_message& m) {
  auto& table = methods();
  auto i = table.find(m.method);
  if (i == table.end()) {
    reply_error(self, m.id, protocol::rpc_code::invalid_request, unknown_method_message(m.method));
    return;
  }
  if (!self->state.initialized && m.method != "initialize") {
    reply_error(self, m.id, protocol::rpc_code::invalid_request, "Not initialized");
    return;
  }
  if (!m.has_params && !takes_no_params(m.method)) {
    reply_error(self, m.id, protocol::rpc_code::invalid_request,
                "Invalid request: missing field `params`");
    return;
  }
  try {
    i->second(self, call{m.id, m.params});
  } catch (const protocol::decode_error& e) {
    reply_error(self, m.id, protocol::rpc_code::invalid_request,
                std::string{"Invalid request: "} + e.what());
  } catch (const refused& e) {
    reply_error(self, m.id, protocol::rpc_code::invalid_request, e.what());
  } catch (const std::exception& e) {
    PARLEY_ERROR("connection event=handler_failed method={} what={}", m.method, e.what());
    reply_error(self, m.id, protocol::rpc_code::internal_error,
                std::string{"Internal error: "} + e.what());
  }
}

// -- server->client requests -------------------------------------------------

/// Server->client request ids, unique in the process: a reply meant for
/// another connection's request never matches one of this connection's.
/// (Codex numbers 0, 1, 2, ... per connection; with one connection per
/// process, as over stdio, the numbers are the same.)
int64_t next_request_id() {
  static std::atomic<int64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

/// A client may echo what its decision is about (`threadId`, `turnId`,
/// `itemId`, `actionDigest`) in the result; a mismatch means the decision
/// was made for something else. Returns the first mismatch, if any.
std::optional<std::string> binding_mismatch(const outgoing_request& req, const json& result) {
  if (!result.is_object()) return std::nullopt;
  auto check = [&](const char* field, const std::string& expected) -> std::optional<std::string> {
    auto i = result.find(field);
    if (i == result.end() || i->is_null()) return std::nullopt;
    if (i->is_string() && i->get_ref<const std::string&>() == expected) return std::nullopt;
    return std::string{field} + " " + i->dump() + " is not " + expected;
  };
  for (auto [field, expected] : {std::pair<const char*, const std::string*>{"threadId", &req.thread_id},
                                 {"turnId", &req.turn_id},
                                 {"itemId", &req.item_id},
                                 {"actionDigest", &req.digest}})
    if (auto m = check(field, *expected)) return m;
  return std::nullopt;
}

/// Decodes the client's decision for the kind of request it answers.
protocol::approval_decision decode_decision(const outgoing_request& req, const json& result) {
  switch (req.what) {
    case outgoing_request::kind::command:
      return protocol::decode_approval_result(result);
    case outgoing_request::kind::file_change:
      return protocol::decode_file_change_result(result);
    case outgoing_request::kind::v1_exec:
    case outgoing_request::kind::v1_patch:
      return protocol::decode_review_decision_result(result);
  }
  return protocol::decode_approval_result(result);
}

bool is_v1(const outgoing_request& req) {
  return req.what == outgoing_request::kind::v1_exec || req.what == outgoing_request::kind::v1_patch;
}

/// The client answered request `rid` (a result or an error).
void on_response(self_ptr self, const protocol::incoming_message& m) {
  auto& st = self->state;
  auto* rid = std::get_if<int64_t>(&m.id.value);
  auto i = rid ? st.outgoing.find(*rid) : st.outgoing.end();
  if (i == st.outgoing.end()) {
    approval_telemetry().on_refused_reply();
    PARLEY_WARN("connection event=unknown_response id={} ignored (late, duplicate or foreign)",
                m.id.to_string());
    return;
  }
  if (m.type == protocol::incoming_message::kind::response) {
    if (auto mismatch = binding_mismatch(*i->second, m.result)) {
      // Not applied: the request stays pending for the right answer (or its deadline).
      approval_telemetry().on_refused_reply();
      PARLEY_WARN("connection event=foreign_decision id={} thread={} refused: {}", *rid,
                  i->second->thread_id, *mismatch);
      return;
    }
  }
  auto req = std::move(i->second);
  st.outgoing.erase(i);
  st.request_of_key.erase(req->key);
  // The prompt is closed before anything the decision causes.
  notify(self, protocol::server_request_resolved{req->thread_id, m.id});
  if (m.type == protocol::incoming_message::kind::error_response) {
    PARLEY_INFO("connection event=approval_error_reply id={} code={} message={}", *rid,
                m.error.code, m.error.message);
    if (is_v1(*req)) {
      // v1 clients get v1's rule: any failure is a denial.
      req->promise.deliver(protocol::approval_decision::decline());
      return;
    }
    req->promise.deliver(make_error(errc::client_error, m.error.message));
    return;
  }
  try {
    req->promise.deliver(decode_decision(*req, m.result));
  } catch (const protocol::decode_error& e) {
    PARLEY_WARN("connection event=malformed_decision id={} error={}", *rid, e.what());
    if (is_v1(*req))
      req->promise.deliver(protocol::approval_decision::decline());
    else
      req->promise.deliver(make_error(errc::malformed_reply, e.what()));
  }
}

/// The request a client sees for an ask: v2, or v1 for legacy clients.
std::pair<const char*, json> request_for(self_ptr self, const approval_ask& ask,
                                         outgoing_request::kind& what) {
  bool legacy = self->state.capabilities.legacy_approvals;
  if (ask.is_file_change()) {
    if (legacy) {
      what = outgoing_request::kind::v1_patch;
      protocol::apply_patch_approval_params p;
      p.conversation_id = ask.thread_id;
      p.call_id = ask.item_id();
      p.file_changes = ask.changes;
      p.reason = ask.file.reason;
      p.grant_root = ask.file.grant_root;
      return {protocol::apply_patch_approval_method, json(p)};
    }
    what = outgoing_request::kind::file_change;
    json params(ask.file);
    params["actionDigest"] = ask.digest;
    return {protocol::file_change_approval_method, std::move(params)};
  }
  if (legacy) {
    what = outgoing_request::kind::v1_exec;
    protocol::exec_command_approval_params p;
    p.conversation_id = ask.thread_id;
    p.call_id = ask.item_id();
    p.command = {"/bin/sh", "-c", ask.raw_command};
    p.cwd = ask.cwd;
    p.reason = ask.command.reason;
    p.parsed_cmd = ask.command.command_actions;
    return {protocol::exec_command_approval_method, json(p)};
  }
  what = outgoing_request::kind::command;
  json params(ask.command);
  params["actionDigest"] = ask.digest;
  return {protocol::command_approval_method, std::move(params)};
}

void on_line(self_ptr self, const std::string& line) {
  if (line.find_first_not_of(" \t") == std::string::npos) return;  // blank line
  auto parsed = protocol::parse_message(line);
  if (auto* err = std::get_if<protocol::envelope_error>(&parsed)) {
    PARLEY_WARN("connection event=bad_line reason=\"{}\" bytes={}", err->reason, line.size());
    return;
  }
  auto& m = std::get<protocol::incoming_message>(parsed);
  if (m.rejected) {  // e.g. nested too deep: answered, never dispatched
    PARLEY_WARN("connection event=rejected_request reason=\"{}\" bytes={}", m.rejected->message,
                line.size());
    reply_error(self, m.id, m.rejected->code, m.rejected->message);
    return;
  }
  switch (m.type) {
    case protocol::incoming_message::kind::request:
      on_request(self, m);
      return;
    case protocol::incoming_message::kind::notification:
      PARLEY_DEBUG("connection event=client_notification method={}", m.method);
      return;  // `initialized` and anything else: nothing to do
    case protocol::incoming_message::kind::response:
    case protocol::incoming_message::kind::error_response:
      on_response(self, m);
      return;
  }
}

void on_eof(self_ptr self) {
  auto& st = self->state;
  if (st.closed) return;
  st.closed = true;
  PARLEY_INFO("connection event=input_closed pending_requests={}", st.outgoing.size());
  // Nobody can answer any more: every pending approval resolves as cancelled.
  for (auto& [rid, req] : st.outgoing) {
    notify(self, protocol::server_request_resolved{req->thread_id, request_id{rid}});
    req->promise.deliver(make_error(errc::transport_closed, "client input closed"));
  }
  st.outgoing.clear();
  st.request_of_key.clear();
  auto finish = [self] {
    self->request(self->state.out, call_timeout, atom::close::value)
        .then([self](atom::ok) { self->quit(); }, [self](caf::error&) { self->quit(); });
  };
  if (!st.options.shutdown_on_close) {
    self->send(st.threads, atom::gone::value, as_client(self));
    finish();
    return;
  }
  self->request(st.threads, std::chrono::seconds(90), atom::shutdown::value)
      .then([finish](atom::ok) { finish(); },
            [finish](caf::error& err) {
              PARLEY_WARN("connection event=shutdown_failed error={}", caf::to_string(err));
              finish();
            });
}

}  // namespace

connection_actor::behavior_type connection(connection_actor::stateful_pointer<connection_state> self,
                                           thread_manager_actor threads, line_writer_actor out,
                                           connection_options options) {
  install_default_handlers(self, "connection");
  self->state.threads = std::move(threads);
  self->state.out = std::move(out);
  self->state.options = std::move(options);
  return {
      [self](atom::line, const std::string& line) { on_line(self, line); },
      [self](atom::eof) { on_eof(self); },
      [self](atom::event, const notification_ptr& n) { notify(self, *n); },  // encoded ahead or here
      [self](atom::ask, const approval_ask& ask) -> caf::result<protocol::approval_decision> {
        auto& st = self->state;
        auto rp = self->make_response_promise<protocol::approval_decision>();
        if (st.closed) {
          rp.deliver(make_error(errc::transport_closed, "client input closed"));
          return rp;
        }
        auto rid = next_request_id();
        auto req = std::make_unique<outgoing_request>();
        auto [method, params] = request_for(self, ask, req->what);
        req->promise = rp;
        req->key = ask.key;
        req->thread_id = ask.thread_id;
        req->turn_id = ask.turn_id();
        req->item_id = ask.item_id();
        req->digest = ask.digest;
        st.outgoing.emplace(rid, std::move(req));
        st.request_of_key.emplace(ask.key, rid);
        write(self, protocol::encode_request(request_id{rid}, method, params));
        return rp;
      },
      [self](atom::withdraw, uint64_t key) {
        auto& st = self->state;
        auto k = st.request_of_key.find(key);
        if (k == st.request_of_key.end()) return;  // already answered
        auto rid = k->second;
        st.request_of_key.erase(k);
        auto i = st.outgoing.find(rid);
        if (i == st.outgoing.end()) return;
        notify(self, protocol::server_request_resolved{i->second->thread_id, request_id{rid}});
        i->second->promise.deliver(make_error(errc::withdrawn, "approval withdrawn"));
        st.outgoing.erase(i);
      },
  };
}

}  // namespace parley
