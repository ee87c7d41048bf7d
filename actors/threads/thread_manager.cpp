#include "actors/threads/thread_manager.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "actors/threads/conversation.hpp"
#include "actors/core/handlers.hpp"
#include "actors/store/rollout_file.hpp"
#include "protocol/ids.hpp"

namespace parley {

namespace {

using self_ptr = thread_manager_actor::stateful_pointer<thread_manager_state>;

constexpr auto shutdown_timeout = std::chrono::seconds(30);

void maybe_finish_shutdown(self_ptr self);

/// A reply this actor owes: counted until delivered (or handed to a thread),
/// so that shutdown never ends with a request left unanswered (CAF 0.17
/// drops an undelivered promise silently).
template <class T>
class owed_reply {
 public:
  explicit owed_reply(self_ptr self)
      : self_(self), rp_(self->make_response_promise<T>()), open_(std::make_shared<bool>(true)) {
    ++self->state.owed;
  }
  template <class... Ts>
  void deliver(Ts&&... xs) {
    rp_.deliver(std::forward<Ts>(xs)...);
    settle();
  }
  template <class... Ts>
  void delegate(Ts&&... xs) {
    rp_.delegate(std::forward<Ts>(xs)...);
    settle();
  }
  caf::typed_response_promise<T> promise() const { return rp_; }

 private:
  void settle() {
    if (!*open_) return;
    *open_ = false;
    --self_->state.owed;
    maybe_finish_shutdown(self_);
  }
  self_ptr self_;
  caf::typed_response_promise<T> rp_;
  std::shared_ptr<bool> open_;
};

caf::error shutting_down_error() { return make_error(errc::overloaded, "server is shutting down"); }

/// Looks up a thread for a request; `missing` is the Codex message prefix.
caf::expected<conversation_actor> find(self_ptr self, const std::string& id, const char* missing) {
  if (!protocol::is_uuid(id)) return make_error(errc::invalid_request, "invalid thread id: " + id);
  auto i = self->state.threads.find(id);
  if (i == self->state.threads.end())
    return make_error(errc::invalid_request, std::string{missing} + id);
  return i->second;
}

constexpr auto store_timeout = std::chrono::seconds(60);

protocol::thread_status not_loaded() {
  return protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};
}

/// Where a new thread's rollout will be (null for ephemeral threads and the
/// memory store), as thread.path reports it before the file exists.
std::optional<std::string> planned_path(const runtime_config& cfg, const protocol::thread& meta) {
  if (meta.ephemeral || cfg.store != runtime_config::store_kind::local) return std::nullopt;
  return cfg.home + "/" + store::rollout_relative_path(meta.created_at, meta.id);
}

conversation_actor spawn_conversation(self_ptr self, protocol::thread meta,
                                      conversation_settings settings) {
  auto id = meta.id;
  auto conv = self->spawn<caf::monitored>(conversation, self->state.svc, std::move(meta),
                                          std::move(settings));
  self->state.threads.emplace(id, conv);
  return conv;
}

/// Loads a stored thread (by explicit path if given, else by id) and runs
/// `then` with it, or delivers the store's error to `rp`.
template <class Promise, class Then>
void load_stored(self_ptr self, const std::string& thread_id,
                 const std::optional<std::string>& path, Promise rp, Then then) {
  auto on_error = [rp](caf::error& err) mutable { rp.deliver(std::move(err)); };
  if (path) {
    self->request(self->state.svc.store, store_timeout, atom::load::value, rollout_path{*path})
        .then([then](stored_thread& t) mutable { then(std::move(t)); }, on_error);
  } else {
    if (!protocol::is_uuid(thread_id)) {
      rp.deliver(make_error(errc::invalid_request, "invalid thread id: " + thread_id));
      return;
    }
    self->request(self->state.svc.store, store_timeout, atom::load::value, thread_id)
        .then([then](stored_thread& t) mutable { then(std::move(t)); }, on_error);
  }
}

/// The turns of a fork: everything, or through `last_turn_id`; a turn still
/// in progress is copied as interrupted.
caf::expected<std::vector<protocol::turn>> fork_history(std::vector<protocol::turn> turns,
                                                        const std::optional<std::string>& last) {
  if (last) {
    auto i = std::find_if(turns.begin(), turns.end(),
                          [&](const protocol::turn& t) { return t.id == *last; });
    if (i == turns.end()) return make_error(errc::invalid_request, "turn not found: " + *last);
    if (i->status == protocol::turn_status::in_progress)
      return make_error(errc::invalid_request,
                        "cannot fork at turn " + *last + ": it is still in progress");
    turns.erase(i + 1, turns.end());
  }
  for (auto& t : turns)
    if (t.status == protocol::turn_status::in_progress)
      t.status = protocol::turn_status::interrupted;
  return turns;
}

bool is_unloading(const caf::error& err) {
  return err.category() == caf::atom("parley") && static_cast<errc>(err.code()) == errc::unloading;
}

/// Codex's answer to a resume of an archived thread.
caf::error archived_error(const std::string& id) {
  return make_error(errc::invalid_request, "session " + id
                                               + " is archived. Unarchive it (thread/unarchive) "
                                                 "first.");
}

using session_promise = owed_reply<protocol::thread_session_response>;

/// Resumes a thread: rejoins it if loaded, else loads it from the store. A
/// thread that is unloading answers "unloading"; the resume then waits for it
/// to be gone and loads it again, so the client still gets one real answer.
void resume_thread(self_ptr self, protocol::thread_resume_params params, client_actor client,
                   session_promise rp) {
  auto& st = self->state;
  if (auto i = st.threads.find(params.thread_id); i != st.threads.end()) {
    auto conv = i->second;
    self->request(conv, store_timeout + shutdown_timeout, atom::resume::value, client, params)
        .then([rp](protocol::thread_session_response& r) mutable { rp.deliver(std::move(r)); },
              [self, rp, params, client, conv](caf::error& err) mutable {
                if (!is_unloading(err)) {
                  rp.deliver(std::move(err));
                  return;
                }
                auto retry = [self, rp, params, client]() mutable {
                  resume_thread(self, params, client, rp);
                };
                auto& threads = self->state.threads;
                auto j = threads.find(params.thread_id);
                if (j != threads.end() && j->second == conv)
                  self->state.on_unloaded.emplace(params.thread_id, std::move(retry));
                else
                  retry();  // already gone
              });
    return;
  }
  load_stored(self, params.thread_id, params.path, rp,
              [self, rp, params, client](stored_thread stored) mutable {
                auto& s = self->state;
                auto id = stored.meta.id;
                if (s.shutting_down) {
                  rp.deliver(shutting_down_error());
                  return;
                }
                if (stored.archived) {
                  rp.deliver(archived_error(id));
                  return;
                }
                auto conv = s.threads.count(id) ? s.threads[id] : conversation_actor{};
                if (!conv) {
                  auto settings = settings_for(stored.meta, params.overrides, *s.svc.config);
                  auto meta = std::move(stored.meta);
                  meta.turns.clear();  // history stays in the store
                  meta.status = protocol::thread_status::idle();
                  conv = spawn_conversation(self, std::move(meta), std::move(settings));
                }
                rp.delegate(conv, atom::resume::value, std::move(client), params);
              });
}

/// Whether a name is blank (Codex: "thread name must not be empty").
bool blank(const std::string& name) {
  return name.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

void maybe_finish_shutdown(self_ptr self) {
  auto& st = self->state;
  if (!st.shutting_down || !st.threads.empty() || st.owed > 0) return;
  for (auto& rp : st.shutdown_waiters) rp.deliver(atom::ok::value);
  st.shutdown_waiters.clear();
  self->quit();
}

}  // namespace

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
  install_default_handlers(self, "thread_manager");
  self->state.svc = std::move(svc);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& threads = self->state.threads;
    std::string gone;
    for (auto i = threads.begin(); i != threads.end(); ++i)
      if (i->second.address() == dm.source) {
        gone = i->first;
        threads.erase(i);
        break;
      }
    auto& waiting = self->state.on_unloaded;
    auto [first, last] = waiting.equal_range(gone);
    std::vector<std::function<void()>> ready;
    for (auto i = first; i != last; ++i) ready.push_back(std::move(i->second));
    waiting.erase(first, last);
    for (auto& f : ready) f();
    maybe_finish_shutdown(self);
  });
  return {
      [self](atom::open, const protocol::thread_start_params& params,
             client_actor client) -> caf::result<protocol::thread_session_response> {
        auto& st = self->state;
        if (st.shutting_down) return make_error(errc::overloaded, "server is shutting down");
        const auto& cfg = *st.svc.config;
        auto cwd = resolve_cwd(params.cwd, cfg.default_cwd);
        if (!cwd) return std::move(cwd.error());
        protocol::thread meta;
        meta.id = protocol::new_uuid_v7();
        meta.ephemeral = params.ephemeral.value_or(false);
        meta.model_provider = params.model_provider.value_or(cfg.model_provider);
        meta.model = params.model.value_or(cfg.model_id);
        meta.created_at = meta.updated_at = protocol::unix_seconds();
        meta.status = protocol::thread_status::idle();
        meta.cwd = *cwd;
        meta.cli_version = cfg.cli_version;
        meta.path = planned_path(cfg, meta);
        conversation_settings settings;
        settings.cwd = *cwd;
        settings.policy = params.approval_policy_.value_or(protocol::approval_policy::on_request());
        settings.sandbox = protocol::sandbox_policy::from_mode(
            params.sandbox.value_or(protocol::sandbox_mode::workspace_write));
        settings.reviewer = params.approvals_reviewer.value_or("user");
        settings.model = *meta.model;
        auto conv = spawn_conversation(self, std::move(meta), std::move(settings));
        return self->delegate(conv, atom::open::value, std::move(client));
      },
      [self](atom::turn_start, protocol::turn_start_params& params,
             client_actor client) -> caf::result<protocol::turn_start_response> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(*conv, atom::turn_start::value, std::move(params), std::move(client));
      },
      [self](atom::interrupt,
             const protocol::turn_interrupt_params& params) -> caf::result<atom::ok> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(*conv, atom::interrupt::value, params.turn_id);
      },
      [self](atom::read, const protocol::thread_read_params& params)
          -> caf::result<protocol::thread_read_response> {
        if (!protocol::is_uuid(params.thread_id))
          return make_error(errc::invalid_request, "invalid thread id: " + params.thread_id);
        if (auto i = self->state.threads.find(params.thread_id); i != self->state.threads.end())
          return self->delegate(i->second, atom::read::value, params.include_turns);
        // Not loaded: read it from the store.
        auto rp = owed_reply<protocol::thread_read_response>(self);
        auto id = params.thread_id;
        self->request(self->state.svc.store, store_timeout, atom::load::value, id)
            .then(
                [rp, include = params.include_turns](stored_thread& t) mutable {
                  t.meta.status = not_loaded();
                  if (!include) t.meta.turns.clear();
                  rp.deliver(protocol::thread_read_response{std::move(t.meta)});
                },
                [rp, id](caf::error&) mutable {
                  rp.deliver(make_error(errc::invalid_request, "thread not loaded: " + id));
                });
        return rp.promise();
      },
      [self](atom::loaded, const protocol::thread_loaded_list_params& params) {
        protocol::thread_loaded_list_response r;
        auto& threads = self->state.threads;
        auto i = params.cursor ? threads.upper_bound(*params.cursor) : threads.begin();
        size_t limit = params.limit && *params.limit > 0 ? *params.limit : threads.size();
        for (; i != threads.end() && r.data.size() < limit; ++i) r.data.push_back(i->first);
        if (i != threads.end() && !r.data.empty()) r.next_cursor = r.data.back();
        return r;
      },
      [self](atom::resume, const protocol::thread_resume_params& params,
             client_actor client) -> caf::result<protocol::thread_session_response> {
        auto rp = owed_reply<protocol::thread_session_response>(self);
        resume_thread(self, params, std::move(client), rp);
        return rp.promise();
      },
      [self](atom::fork, const protocol::thread_fork_params& params,
             client_actor client) -> caf::result<protocol::thread_session_response> {
        if (self->state.shutting_down)
          return make_error(errc::overloaded, "server is shutting down");
        auto rp = owed_reply<protocol::thread_session_response>(self);
        load_stored(self, params.thread_id, params.path, rp,
                    [self, rp, params, client](stored_thread source) mutable {
                      auto& s = self->state;
                      if (s.shutting_down) {
                        rp.deliver(shutting_down_error());
                        return;
                      }
                      if (source.archived) {  // Codex: unarchive it first
                        rp.deliver(archived_error(source.meta.id));
                        return;
                      }
                      auto turns = fork_history(std::move(source.meta.turns), params.last_turn_id);
                      if (!turns) {
                        rp.deliver(std::move(turns.error()));
                        return;
                      }
                      auto settings = settings_for(source.meta, params.overrides, *s.svc.config);
                      protocol::thread meta = source.meta;
                      meta.id = protocol::new_uuid_v7();
                      meta.forked_from_id = source.meta.id;
                      meta.ephemeral = params.ephemeral;
                      meta.created_at = meta.updated_at = protocol::unix_seconds();
                      meta.name.reset();
                      meta.cwd = settings.cwd;
                      meta.model = settings.model;
                      meta.status = protocol::thread_status::idle();
                      meta.path = planned_path(*s.svc.config, meta);
                      meta.turns = params.exclude_turns ? std::vector<protocol::turn>{}
                                                        : std::move(*turns);
                      auto conv = spawn_conversation(self, std::move(meta), std::move(settings));
                      rp.delegate(conv, atom::open::value, std::move(client));
                    });
        return rp.promise();
      },
      [self](atom::list, const protocol::thread_list_params& params)
          -> caf::result<protocol::thread_list_response> {
        auto rp = owed_reply<protocol::thread_list_response>(self);
        self->request(self->state.svc.store, store_timeout, atom::list::value, params)
            .then(
                [self, rp](protocol::thread_list_response& page) mutable {
                  // Loaded threads report their live status.
                  for (auto& t : page.data)
                    if (self->state.threads.count(t.id) > 0)
                      t.status = protocol::thread_status::idle();
                  rp.deliver(std::move(page));
                },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp.promise();
      },
      [self](atom::archive, const protocol::thread_id_params& params, bool archive,
             client_actor client) -> caf::result<protocol::thread> {
        if (!protocol::is_uuid(params.thread_id))
          return make_error(errc::invalid_request, "invalid thread id: " + params.thread_id);
        auto rp = owed_reply<protocol::thread>(self);
        auto id = params.thread_id;
        auto store_it = [self, rp, id, archive, client]() mutable {
          self->request(self->state.svc.store, store_timeout, atom::archive::value, id, archive)
              .then(
                  [self, rp, id, archive, client](stored_thread& t) mutable {
                    t.meta.status = not_loaded();
                    t.meta.turns.clear();
                    rp.deliver(t.meta);
                    if (archive)
                      self->send(client, atom::event::value,
                                 make_event(self->state.svc, protocol::thread_archived{id}));
                    else
                      self->send(client, atom::event::value,
                                 make_event(self->state.svc, protocol::thread_unarchived{id}));
                  },
                  [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        };
        if (!archive || self->state.threads.count(id) == 0) {
          store_it();
          return rp.promise();
        }
        // Archiving unloads a loaded thread first (its turn ends interrupted),
        // but only once the store shows it can be archived: a failed archive
        // leaves the thread as it was. Without a turn nothing is stored yet.
        self->request(self->state.svc.store, store_timeout, atom::load::value, id)
            .then(
                [self, rp, id, store_it](stored_thread& t) mutable {
                  if (t.archived || t.meta.turns.empty()) {
                    rp.deliver(make_error(errc::invalid_request,
                                          "no rollout found for thread id " + id));
                    return;
                  }
                  auto i = self->state.threads.find(id);
                  if (i == self->state.threads.end()) {
                    store_it();
                    return;
                  }
                  self->request(i->second, store_timeout, atom::shutdown::value)
                      .then([store_it](atom::ok) mutable { store_it(); },
                            [store_it](caf::error&) mutable { store_it(); });
                },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp.promise();
      },
      [self](atom::rename, const protocol::thread_name_set_params& params,
             client_actor client) -> caf::result<atom::ok> {
        if (!params.name || blank(*params.name))
          return make_error(errc::invalid_request, "thread name must not be empty");
        if (auto i = self->state.threads.find(params.thread_id); i != self->state.threads.end())
          return self->delegate(i->second, atom::rename::value, params);
        if (!protocol::is_uuid(params.thread_id))
          return make_error(errc::invalid_request, "invalid thread id: " + params.thread_id);
        auto rp = owed_reply<atom::ok>(self);
        // A stored thread that is not loaded: the store must know it.
        self->request(self->state.svc.store, store_timeout, atom::load::value, params.thread_id)
            .then(
                [self, rp, params, client](stored_thread&) mutable {
                  self->request(self->state.svc.store, store_timeout, atom::append::value,
                                params.thread_id, store_record{thread_renamed_record{params.name}})
                      .then(
                          [self, rp, params, client](atom::ok) mutable {
                            rp.deliver(atom::ok::value);
                            self->send(
                                client, atom::event::value,
                                make_event(self->state.svc, protocol::thread_name_updated{
                                                                params.thread_id, params.name}));
                          },
                          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
                },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp.promise();
      },
      [self](atom::unsub, const protocol::thread_id_params& params,
             client_actor client) -> caf::result<protocol::thread_unsubscribe_response> {
        auto i = self->state.threads.find(params.thread_id);
        if (i == self->state.threads.end())
          return protocol::thread_unsubscribe_response{"notLoaded"};
        auto rp = owed_reply<protocol::thread_unsubscribe_response>(self);
        self->request(i->second, store_timeout, atom::unsub::value, std::move(client))
            .then(
                [rp](std::string& status) mutable {
                  rp.deliver(protocol::thread_unsubscribe_response{std::move(status)});
                },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp.promise();
      },
      [self](atom::stats) { return self->state.svc.telemetry->counts(); },
      [self](atom::gone, const client_actor& client) {
        for (auto& [id, conv] : self->state.threads) self->send(conv, atom::gone::value, client);
      },
      [self](atom::shutdown) -> caf::result<atom::ok> {
        auto& st = self->state;
        auto rp = self->make_response_promise<atom::ok>();
        st.shutdown_waiters.push_back(rp);
        if (!st.shutting_down) {
          st.shutting_down = true;
          for (auto& [id, conv] : st.threads)
            self->request(conv, shutdown_timeout, atom::shutdown::value)
                .then([](atom::ok) {},
                      [self, conv = conv](caf::error& err) {
                        PARLEY_WARN("thread_manager event=shutdown_timeout error={}",
                                    caf::to_string(err));
                        self->send_exit(conv, caf::exit_reason::kill);
                      });
        }
        maybe_finish_shutdown(self);
        return rp;
      },
  };
}

}  // namespace parley
