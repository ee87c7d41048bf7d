// The thread manager: thread id -> conversation. It starts conversations,
// routes requests to the loaded ones, reads what is stored, and stops them
// all in an orderly shutdown. Work on stored threads (resume, fork, archive,
// rename) is in thread_manager_stored.cpp.

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "actors/core/handlers.hpp"
#include "actors/core/tenant.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/threads/thread_manager_detail.hpp"

namespace parley {

namespace thread_manager_detail {

caf::error shutting_down_error() {
  return make_error(errc::overloaded, "server is shutting down");
}

/// Looks up a thread for a request; `missing` is the Codex message prefix.
caf::expected<conversation_actor> find(self_ptr self, const std::string& id, const char* missing) {
  if (!protocol::is_uuid(id)) return make_error(errc::invalid_request, "invalid thread id: " + id);
  auto i = self->state.threads.find(id);
  if (i == self->state.threads.end())
    return make_error(errc::invalid_request, std::string{missing} + id);
  return i->second;
}

protocol::thread_status not_loaded() {
  return protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};
}

/// Where a new thread's rollout will be (null for ephemeral threads and the
/// memory store), as thread.path reports it before the file exists.
std::optional<std::string> planned_path(const runtime_config& cfg, const protocol::thread& meta) {
  if (meta.ephemeral || cfg.store != runtime_config::store_kind::local) return std::nullopt;
  return cfg.home + "/" + store::rollout_relative_path(meta.created_at, meta.id);
}

void with_lease(self_ptr self, const std::string& thread_id, std::function<void()> then,
                std::function<void(caf::error)> fail) {
  if (!self->state.svc.config->cluster) return then();
  self->request(self->state.svc.store, store_timeout, atom::lease::value, thread_id)
      .then([then](uint64_t) { then(); },
            [fail, thread_id](caf::error& err) {
              PARLEY_INFO("thread_manager event=lease_refused thread={} error={}", thread_id,
                          message_of(err));
              fail(std::move(err));
            });
}

caf::expected<usage_grant> admit_thread(self_ptr self, const std::string& tenant,
                                        const client_actor& client) {
  auto& svc = self->state.svc;
  return acquire_usage(svc.telemetry, usage_kind::loaded_threads, tenant_or_default(tenant),
                       client ? client.id() : 0, svc.config->limits);
}

conversation_actor spawn_conversation(self_ptr self, protocol::thread meta,
                                      conversation_settings settings, usage_grant usage,
                                      std::vector<context_item> fork_context) {
  auto id = meta.id;
  self->state.books[id] = {tenant_or_default(meta.tenant), std::move(usage)};
  auto conv = self->spawn<conversation, caf::monitored>(self->state.shared_svc, std::move(meta),
                                                        std::move(settings), std::move(fork_context));
  auto [entry, added] = self->state.threads.emplace(id, conv);
  if (added)
    self->state.by_actor.emplace(conv.id(), thread_manager_state::loaded_actor{&entry->first, {}});
  return conv;
}

const conversation_actor& note_client(self_ptr self, const conversation_actor& conv,
                                      const client_actor& client) {
  auto& st = self->state;
  auto loaded = st.by_actor.find(conv.id());
  if (!client || loaded == st.by_actor.end()) return conv;
  auto addr = caf::actor_cast<caf::actor_addr>(client);
  auto& clients = loaded->second.clients;
  if (std::find(clients.begin(), clients.end(), addr) != clients.end()) return conv;
  clients.push_back(addr);
  auto [noted, first] = st.by_client.try_emplace(addr);
  noted->second.insert(conv.id());
  // Its end counts as its `gone`: a client that left while a request of
  // its was still on its way here (a resume waiting for the store) was
  // not yet noted when its `gone` came, and one that ends without a
  // `gone` would be kept by its threads for ever.
  if (first) self->monitor(client);
  return conv;
}

namespace {

/// Tells the conversations `addr`'s requests went to that it left (by
/// `client`, its handle: null once nothing holds it, when no conversation
/// can still be subscribed to it).
void forget_client(self_ptr self, const caf::actor_addr& addr, const client_actor& client) {
  auto& st = self->state;
  auto noted = st.by_client.find(addr);
  if (noted == st.by_client.end()) return;
  for (auto conv_id : noted->second) {
    auto loaded = st.by_actor.find(conv_id);
    if (loaded == st.by_actor.end()) continue;
    auto& clients = loaded->second.clients;
    clients.erase(std::remove(clients.begin(), clients.end(), addr), clients.end());
    auto conv = st.threads.find(*loaded->second.id);
    if (conv != st.threads.end() && client) self->send(conv->second, atom::gone::value, client);
  }
  st.by_client.erase(noted);
}

}  // namespace

/// A client left: the conversations its requests went to forget it.
void on_client_gone(self_ptr self, const client_actor& client) {
  auto addr = caf::actor_cast<caf::actor_addr>(client);
  if (self->state.by_client.count(addr) == 0) return;
  self->demonitor(addr);
  forget_client(self, addr, client);
}

void maybe_finish_shutdown(self_ptr self) {
  auto& st = self->state;
  if (!st.shutting_down || !st.threads.empty() || st.owed > 0) return;
  for (auto& rp : st.shutdown_waiters) rp.deliver(atom::ok::value);
  st.shutdown_waiters.clear();
  self->quit();
}

// The manager's request handlers (in the detail namespace, not a file-scope
// using-directive: that would leak into the other sources of a unity build).
namespace {

/// Whether a name is blank (Codex: "thread name must not be empty").
bool blank(const std::string& name) {
  return name.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

/// thread/start: a new conversation, which subscribes the client and answers.
caf::result<protocol::thread_session_response> start_thread(
    self_ptr self, const protocol::thread_start_params& params, client_actor client) {
  auto& st = self->state;
  if (st.shutting_down) return shutting_down_error();
  if (!params.ephemeral.value_or(false)) {
    if (auto refused = store_refusal(st.svc)) return refused;
  }
  const auto& cfg = *st.svc.config;
  auto cwd = resolve_cwd(params.cwd, cfg.default_cwd);
  if (!cwd) return std::move(cwd.error());
  protocol::thread meta;
  meta.id = protocol::is_uuid(params.assigned_id) && !st.threads.count(params.assigned_id)
                ? params.assigned_id
                : protocol::new_uuid_v7();
  meta.ephemeral = params.ephemeral.value_or(false);
  meta.model_provider = params.model_provider.value_or(cfg.model_provider);
  meta.model = params.model.value_or(cfg.model_id);
  meta.created_at = meta.updated_at = protocol::unix_seconds();
  meta.status = protocol::thread_status::idle();
  meta.cwd = *cwd;
  meta.cli_version = cfg.cli_version;
  meta.tenant = tenant_or_default(params.tenant);
  meta.path = planned_path(cfg, meta);
  conversation_settings settings;
  settings.cwd = *cwd;
  settings.policy = params.approval_policy_.value_or(protocol::approval_policy::on_request());
  settings.sandbox = protocol::sandbox_policy::from_mode(
      params.sandbox.value_or(protocol::sandbox_mode::workspace_write));
  settings.reviewer = params.approvals_reviewer.value_or("user");
  settings.model = *meta.model;
  if (params.dynamic_tools) {
    settings.dynamic_tools = *params.dynamic_tools;
    meta.dynamic_tools = params.dynamic_tool_specs;  // stored with the thread
  }
  if (meta.ephemeral || !cfg.cluster) {
    auto admitted = admit_thread(self, meta.tenant, client);
    if (!admitted) return std::move(admitted.error());
    auto conv = spawn_conversation(self, std::move(meta), std::move(settings), std::move(*admitted));
    return self->delegate(note_client(self, conv, client), atom::open::value, std::move(client));
  }
  // Cluster: the new thread's lease first (fencing its first write).
  auto rp = owed_reply<protocol::thread_session_response>(self);
  auto id = meta.id;
  with_lease(
      self, id,
      [self, rp, meta, settings, client]() mutable {
        if (self->state.shutting_down) return rp.deliver(shutting_down_error());
        auto admitted = admit_thread(self, meta.tenant, client);
        if (!admitted) return rp.deliver(std::move(admitted.error()));
        auto conv = spawn_conversation(self, std::move(meta), std::move(settings),
                                       std::move(*admitted));
        rp.delegate(note_client(self, conv, client), atom::open::value, std::move(client));
      },
      [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
  return rp.promise();
}

/// thread/read: from the conversation if loaded, else from the store.
caf::result<protocol::thread_read_response> read_thread(
    self_ptr self, const protocol::thread_read_params& params) {
  if (!protocol::is_uuid(params.thread_id))
    return make_error(errc::invalid_request, "invalid thread id: " + params.thread_id);
  if (auto i = self->state.threads.find(params.thread_id); i != self->state.threads.end())
    return self->delegate(i->second, atom::read::value, params.include_turns);
  auto rp = owed_reply<protocol::thread_read_response>(self);
  auto id = params.thread_id;
  self->request(self->state.svc.store, store_timeout, atom::load::value, id)
      .then(
          [self, rp, id, include = params.include_turns](stored_thread& t) mutable {
            // Loaded meanwhile (a restart going on with its turn): what the
            // file held when it was read may be that turn half-written, so
            // the conversation answers, as for any loaded thread.
            if (auto i = self->state.threads.find(id); i != self->state.threads.end()) {
              self->request(i->second, store_timeout, atom::read::value, include)
                  .then([rp](protocol::thread_read_response& r) mutable { rp.deliver(std::move(r)); },
                        [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
              return;
            }
            t.meta.status = not_loaded();
            if (!include) t.meta.turns.clear();
            rp.deliver(protocol::thread_read_response{std::move(t.meta)});
          },
          [rp, id](caf::error& err) mutable {
            // No rollout at all: Codex's answer. A rollout that cannot be
            // read: why, with its path and line, so it can be repaired.
            if (message_of(err).rfind("no rollout found", 0) == 0)
              rp.deliver(make_error(errc::invalid_request, "thread not loaded: " + id));
            else
              rp.deliver(std::move(err));
          });
  return rp.promise();
}

protocol::thread_loaded_list_response loaded_threads(
    self_ptr self, const protocol::thread_loaded_list_params& params) {
  protocol::thread_loaded_list_response r;
  auto& threads = self->state.threads;
  auto i = params.cursor ? threads.upper_bound(*params.cursor) : threads.begin();
  size_t limit = params.limit && *params.limit > 0 ? *params.limit : threads.size();
  auto& books = self->state.books;
  for (; i != threads.end() && r.data.size() < limit; ++i) {
    auto t = books.find(i->first);
    if (params.tenant && (t == books.end() || t->second.tenant != *params.tenant)) continue;
    r.data.push_back(i->first);
  }
  if (i != threads.end() && !r.data.empty()) r.next_cursor = r.data.back();
  return r;
}

/// Whose a thread is: a loaded one's from memory, else its stored metadata.
caf::result<std::string> tenant_of(self_ptr self, const std::string& id) {
  auto& books = self->state.books;
  if (auto t = books.find(id); t != books.end()) return t->second.tenant;
  auto rp = self->make_response_promise<std::string>();
  self->request(self->state.svc.store, store_timeout, atom::tenant::value, id)
      .then([rp](std::string& owner) mutable { rp.deliver(tenant_or_default(owner)); },
            [rp](caf::error& err) mutable {
              // Nobody's: "" (the request then runs and answers as for any
              // unknown thread). Another failure is no answer to trust.
              if (message_of(err).rfind("no rollout found", 0) == 0)
                rp.deliver(std::string{});
              else
                rp.deliver(std::move(err));
            });
  return rp;
}

/// thread/list: the store's page, with the live status of loaded threads.
caf::result<protocol::thread_list_response> list_threads(
    self_ptr self, const protocol::thread_list_params& params) {
  auto rp = owed_reply<protocol::thread_list_response>(self);
  self->request(self->state.svc.store, store_timeout, atom::list::value, params)
      .then(
          [self, rp](protocol::thread_list_response& page) mutable {
            for (auto& t : page.data)
              if (self->state.threads.count(t.id) > 0) t.status = protocol::thread_status::idle();
            rp.deliver(std::move(page));
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
  return rp.promise();
}

caf::result<atom::ok> rename_thread(self_ptr self, const protocol::thread_name_set_params& params,
                                    client_actor client) {
  if (!params.name || blank(*params.name))
    return make_error(errc::invalid_request, "thread name must not be empty");
  if (auto i = self->state.threads.find(params.thread_id); i != self->state.threads.end())
    return self->delegate(i->second, atom::rename::value, params);
  if (!protocol::is_uuid(params.thread_id))
    return make_error(errc::invalid_request, "invalid thread id: " + params.thread_id);
  auto rp = owed_reply<atom::ok>(self);
  rename_stored(self, params, std::move(client), rp);
  return rp.promise();
}

caf::result<protocol::thread_unsubscribe_response> unsubscribe(
    self_ptr self, const protocol::thread_id_params& params, client_actor client) {
  auto i = self->state.threads.find(params.thread_id);
  if (i == self->state.threads.end()) return protocol::thread_unsubscribe_response{"notLoaded"};
  auto rp = owed_reply<protocol::thread_unsubscribe_response>(self);
  self->request(i->second, store_timeout, atom::unsub::value, std::move(client))
      .then(
          [rp](std::string& status) mutable {
            rp.deliver(protocol::thread_unsubscribe_response{std::move(status)});
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
  return rp.promise();
}

/// Conversations still there when shutdown is overdue are killed: their
/// turns had `shutdown_timeout` to end.
void kill_overdue(self_ptr self) {
  for (auto& [id, conv] : self->state.threads) {
    PARLEY_WARN("thread_manager event=shutdown_timeout thread={}", id);
    self->send_exit(conv, caf::exit_reason::kill);
  }
}

/// Stops every conversation (their turns end interrupted); the reply comes
/// when all are gone and no reply is owed. Each conversation gets one
/// message, and one timer covers them all: a request per conversation would
/// leave n response handlers waiting in CAF 0.17's flat map, whose lookup
/// and erase are linear, so n threads took n^2/2 steps to stop.
caf::result<atom::ok> shut_down(self_ptr self) {
  auto& st = self->state;
  auto rp = self->make_response_promise<atom::ok>();
  st.shutdown_waiters.push_back(rp);
  if (!st.shutting_down) {
    st.shutting_down = true;
    st.shutdown_overdue_at = self->clock().now() + shutdown_timeout;
    // Anonymous: each answer (atom::ok) is dropped; the down message is
    // what this actor waits for.
    for (auto& [id, conv] : st.threads) caf::anon_send(conv, atom::shutdown::value);
    // Comes back here as a shutdown of its own, which finds it overdue.
    caf::delayed_anon_send(caf::actor_cast<thread_manager_actor>(self), shutdown_timeout,
                           atom::shutdown::value);
  } else if (self->clock().now() >= st.shutdown_overdue_at) {
    kill_overdue(self);
  }
  maybe_finish_shutdown(self);
  return rp;
}

void keep_deadline(self_ptr self, const std::string& id);

/// A conversation is gone: forget it, and run what waited for it to go.
void on_conversation_down(self_ptr self, const caf::down_msg& dm) {
  auto& threads = self->state.threads;
  std::string gone;
  if (auto known = self->state.by_actor.find(dm.source.id());
      known != self->state.by_actor.end()) {
    gone = *known->second.id;
    for (auto& client : known->second.clients) {
      auto noted = self->state.by_client.find(client);
      if (noted == self->state.by_client.end()) continue;
      noted->second.erase(known->first);
      if (noted->second.empty()) self->state.by_client.erase(noted);
    }
    self->state.by_actor.erase(known);
    threads.erase(gone);
    self->state.books.erase(gone);  // its loaded-thread unit is released
  }
  // Unloaded here: another node may load it (its epoch stays, fencing us).
  if (!gone.empty() && self->state.svc.config->cluster)
    self->send(self->state.svc.store, atom::release::value, gone);
  if (!gone.empty() && is_errc(dm.reason, errc::unloading)) keep_deadline(self, gone);
  auto& waiting = self->state.on_unloaded;
  auto [first, last] = waiting.equal_range(gone);
  std::vector<std::function<void()>> ready;
  for (auto i = first; i != last; ++i) ready.push_back(std::move(i->second));
  waiting.erase(first, last);
  for (auto& f : ready) f();
  if (threads.empty() && !self->state.step_down_waiters.empty()) {
    for (auto& rp : self->state.step_down_waiters) rp.deliver(self->state.stepped_down);
    self->state.step_down_waiters.clear();
  }
  maybe_finish_shutdown(self);
}

void arm_deadline(self_ptr self);

/// A thread parked (unloaded while its turn waits on a person): its stored
/// deadline loads it back if nobody resumes it first.
void keep_deadline(self_ptr self, const std::string& id) {
  self->request(self->state.svc.store, store_timeout, atom::load::value, id)
      .then(
          [self, id](stored_thread& t) {
            if (!t.pending || t.pending->at != action_record::phase::asked) {
              // Decided while it parked: go on now.
              if (t.pending) restore_stored(self, id);
              return;
            }
            self->state.deadlines.emplace(t.pending->deadline_ms, id);
            arm_deadline(self);
          },
          [id](caf::error& err) {
            PARLEY_WARN("thread_manager event=parked_unreadable thread={} error={}", id,
                        caf::to_string(err));
          });
}

/// Sets the timer for the earliest stored deadline.
void arm_deadline(self_ptr self) {
  auto& st = self->state;
  if (st.deadlines.empty()) return;
  auto next = st.deadlines.begin()->first;
  if (st.deadline_armed_for != 0 && st.deadline_armed_for <= next) return;
  st.deadline_armed_for = next;
  auto wait = std::max<int64_t>(0, next - protocol::unix_ms());
  self->delayed_send(self, std::chrono::milliseconds(wait), atom::deadline::value);
}

/// Loads the threads whose stored deadline has passed (their approval then
/// times out, fail closed), and sets the timer for the next.
void on_deadline(self_ptr self) {
  auto& st = self->state;
  st.deadline_armed_for = 0;
  auto now = protocol::unix_ms();
  while (!st.deadlines.empty() && st.deadlines.begin()->first <= now) {
    auto id = st.deadlines.begin()->second;
    st.deadlines.erase(st.deadlines.begin());
    restore_stored(self, id);
  }
  arm_deadline(self);
}

/// What the store says is pending at start: a decided or started action
/// goes on at once (it runs once, or ends failed); an asked one waits,
/// unloaded, for a client to resume it or for its deadline.
void on_pending(self_ptr self, std::vector<pending_thread>& pending) {
  size_t now = 0;
  for (auto& p : pending) {
    if (p.at == action_record::phase::asked) {
      self->state.deadlines.emplace(p.deadline_ms, p.thread_id);
      continue;
    }
    ++now;
    restore_stored(self, p.thread_id);
  }
  PARLEY_INFO("thread_manager event=pending_at_start asked={} going_on={}", pending.size() - now,
              now);
  arm_deadline(self);
}

}  // namespace

}  // namespace thread_manager_detail

caf::expected<std::string> resolve_cwd(const std::optional<std::string>& requested,
                                       const std::string& fallback) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = requested && !requested->empty() ? fs::path(*requested)
               : !fallback.empty()              ? fs::path(fallback)
                                                : fs::current_path(ec);
  if (p.is_relative()) p = fs::absolute(p, ec);
  if (!fs::is_directory(p, ec))
    return make_error(errc::invalid_request, "cwd is not a directory: " + p.string());
  return p.lexically_normal().string();
}

thread_manager_actor::behavior_type thread_manager(
    thread_manager_actor::stateful_pointer<thread_manager_state> self, runtime_services svc) {
  using namespace thread_manager_detail;
  install_default_handlers(self, "thread_manager");
  self->state.svc = std::move(svc);
  self->state.shared_svc = std::make_shared<const runtime_services>(self->state.svc);
  self->set_down_handler([self](caf::down_msg& dm) {
    if (self->state.by_client.count(dm.source) > 0) {  // a client's end (see note_client)
      auto client
          = caf::actor_cast<client_actor>(caf::actor_cast<caf::strong_actor_ptr>(dm.source));
      forget_client(self, dm.source, client);
      return;
    }
    on_conversation_down(self, dm);
  });
  self->state.commands = self->spawn<caf::linked>(command_registry, self->state.svc);
  // Work that was in flight when the server last stopped. (Long: a new
  // local index answers once it has read every rollout.)
  self->request(self->state.svc.store, std::chrono::seconds(3600), atom::pending::value)
      .then([self](std::vector<pending_thread>& pending) { on_pending(self, pending); },
            [](caf::error& err) {
              PARLEY_WARN("thread_manager event=pending_unavailable error={}", caf::to_string(err));
            });
  return {
      [self](atom::open, const protocol::thread_start_params& params, client_actor client) {
        return start_thread(self, params, std::move(client));
      },
      [self](atom::turn_start, protocol::turn_start_params& params,
             client_actor client) -> caf::result<protocol::turn_start_response> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(note_client(self, *conv, client), atom::turn_start::value,
                              std::move(params), std::move(client));
      },
      [self](atom::interrupt,
             const protocol::turn_interrupt_params& params) -> caf::result<atom::ok> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(*conv, atom::interrupt::value, params.turn_id);
      },
      [self](atom::elicit, approval_ask& ask) -> caf::result<approval_actor> {
        auto conv = find(self, ask.thread_id, "thread not loaded: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(*conv, atom::elicit::value, std::move(ask));
      },
      [self](atom::shell, protocol::thread_shell_command_params& params,
             client_actor client) -> caf::result<atom::ok> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(note_client(self, *conv, client), atom::shell::value,
                              std::move(params), std::move(client));
      },
      [self](atom::exec_start, protocol::command_exec_params& p,
             client_actor& client) -> caf::result<protocol::command_exec_response> {
        return self->delegate(self->state.commands, atom::exec_start::value, std::move(p),
                              std::move(client));
      },
      [self](atom::exec_write, std::string& id, std::string& bytes, bool close,
             client_actor& client) -> caf::result<atom::ok> {
        return self->delegate(self->state.commands, atom::exec_write::value, std::move(id),
                              std::move(bytes), close, std::move(client));
      },
      [self](atom::exec_kill, std::string& id, client_actor& client) -> caf::result<atom::ok> {
        return self->delegate(self->state.commands, atom::exec_kill::value, std::move(id),
                              std::move(client));
      },
      [self](atom::exec_resize, std::string& id, const protocol::terminal_size& size,
             client_actor& client) -> caf::result<atom::ok> {
        return self->delegate(self->state.commands, atom::exec_resize::value, std::move(id), size,
                              std::move(client));
      },
      [self](atom::compact, protocol::thread_id_params& params,
             client_actor client) -> caf::result<atom::ok> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(note_client(self, *conv, client), atom::compact::value,
                              std::move(client));
      },
      [self](atom::review, protocol::review_start_params& params,
             client_actor client) -> caf::result<protocol::review_start_response> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(note_client(self, *conv, client), atom::review::value,
                              std::move(params), std::move(client));
      },
      [self](atom::steer, protocol::turn_steer_params& params,
             client_actor client) -> caf::result<protocol::turn_steer_response> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(*conv, atom::steer::value, std::move(params), std::move(client));
      },
      [self](atom::read, const protocol::thread_read_params& params) {
        return read_thread(self, params);
      },
      [self](atom::loaded, const protocol::thread_loaded_list_params& params) {
        return loaded_threads(self, params);
      },
      [self](atom::resume, const protocol::thread_resume_params& params,
             client_actor client) -> caf::result<protocol::thread_session_response> {
        auto rp = session_promise(self);
        resume_thread(self, params, std::move(client), rp);
        return rp.promise();
      },
      [self](atom::fork, const protocol::thread_fork_params& params,
             client_actor client) -> caf::result<protocol::thread_session_response> {
        if (self->state.shutting_down) return shutting_down_error();
        auto rp = session_promise(self);
        fork_thread(self, params, std::move(client), rp);
        return rp.promise();
      },
      [self](atom::list, const protocol::thread_list_params& params) {
        return list_threads(self, params);
      },
      [self](atom::archive, const protocol::thread_id_params& params, bool archive,
             client_actor client) -> caf::result<protocol::thread> {
        if (!protocol::is_uuid(params.thread_id))
          return make_error(errc::invalid_request, "invalid thread id: " + params.thread_id);
        auto rp = owed_reply<protocol::thread>(self);
        archive_thread(self, params.thread_id, archive, std::move(client), rp);
        return rp.promise();
      },
      [self](atom::erase, const protocol::thread_id_params& params,
             client_actor client) -> caf::result<atom::ok> {
        if (!protocol::is_uuid(params.thread_id))
          return make_error(errc::invalid_request, "invalid thread id: " + params.thread_id);
        auto rp = owed_reply<atom::ok>(self);
        delete_thread(self, params.thread_id, std::move(client), rp);
        return rp.promise();
      },
      [self](atom::goal, goal_request& req, client_actor client) -> caf::result<goal_answer> {
        if (!protocol::is_uuid(req.params.thread_id))
          return make_error(errc::invalid_request, "invalid thread id: " + req.params.thread_id);
        auto rp = owed_reply<goal_answer>(self);
        goal_of_thread(self, std::move(req), std::move(client), rp);
        return rp.promise();
      },
      [self](atom::edit, thread_edit& edit, client_actor&) -> caf::result<thread_edit_answer> {
        if (!protocol::is_uuid(edit.thread_id))
          return make_error(errc::invalid_request, "invalid thread id: " + edit.thread_id);
        auto rp = owed_reply<thread_edit_answer>(self);
        edit_thread(self, std::move(edit), rp);
        return rp.promise();
      },
      [self](atom::rename, const protocol::thread_name_set_params& params, client_actor client) {
        return rename_thread(self, params, std::move(client));
      },
      [self](atom::unsub, const protocol::thread_id_params& params, client_actor client) {
        return unsubscribe(self, params, std::move(client));
      },
      [self](atom::tenant, const std::string& id) { return tenant_of(self, id); },
      [self](atom::stats) { return self->state.svc.telemetry->counts(); },
      [self](atom::gone, const client_actor& client) { on_client_gone(self, client); },
      [self](atom::shutdown) { return shut_down(self); },
      [self](atom::pending, std::vector<pending_thread>& pending) { on_pending(self, pending); },
      [self](atom::deadline) { on_deadline(self); },
      [self](atom::rejoin) -> caf::result<uint64_t> {
        auto& st = self->state;
        auto rp = self->make_response_promise<uint64_t>();
        st.stepped_down = st.threads.size();
        if (st.threads.empty()) return uint64_t{0};
        st.step_down_waiters.push_back(rp);
        for (auto& [id, conv] : st.threads)
          self->send_exit(conv, make_error(errc::not_owner, "this node lost the thread's lease"));
        return rp;
      },
  };
}

}  // namespace parley
