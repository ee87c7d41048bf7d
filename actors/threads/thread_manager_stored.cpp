// The thread manager's work on stored threads: resuming (rejoining a loaded
// thread or loading it), forking, archiving and renaming one that is not
// loaded. Each answers exactly once, through an owed reply.

#include <algorithm>
#include <unordered_set>

#include "actors/core/log.hpp"
#include "actors/core/tenant.hpp"
#include "actors/threads/thread_manager_detail.hpp"

namespace parley::thread_manager_detail {

namespace {

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

/// The model context of a fork's turns (and what came before any turn).
std::vector<context_item> fork_context(std::vector<context_item>& source,
                                       const std::vector<protocol::turn>& kept) {
  std::unordered_set<std::string> ids{""};
  for (const auto& t : kept) ids.insert(t.id);
  std::vector<context_item> out;
  for (auto& c : source)
    if (ids.count(c.turn_id)) out.push_back(std::move(c));
  return out;
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

/// The new thread's metadata: the source's, with its own id and dates.
protocol::thread fork_meta(const protocol::thread& source, const thread_manager_state& st,
                           const conversation_settings& settings,
                           const protocol::thread_fork_params& params) {
  protocol::thread meta = source;
  meta.id = protocol::new_uuid_v7();
  meta.forked_from_id = source.id;
  meta.ephemeral = params.ephemeral;
  meta.created_at = meta.updated_at = protocol::unix_seconds();
  meta.name.reset();
  meta.cwd = settings.cwd;
  meta.model = settings.model;
  meta.status = protocol::thread_status::idle();
  meta.path = planned_path(*st.svc.config, meta);
  return meta;
}

/// Archives or unarchives in the store, then tells the client.
void store_archive(self_ptr self, const std::string& id, bool archive, client_actor client,
                   owed_reply<protocol::thread> rp) {
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
}

/// What the turn of a pending action goes on from: its id, start and the
/// user's text and what was steered in (the scripted model plans from them).
resumed_turn resumed_of(const stored_thread& t) {
  resumed_turn r;
  r.action = *t.pending;
  r.turn_id = r.action.turn_id;
  for (const auto& turn : t.meta.turns) {
    if (turn.id != r.turn_id) continue;
    r.started_at = turn.started_at.value_or(t.meta.created_at);
    bool first = true;
    for (const auto& item : turn.items) {
      auto* u = std::get_if<protocol::user_message_item>(&item);
      if (!u) continue;
      // The first is the turn's own; later ones were steered in.
      if (first)
        r.user_text = protocol::joined_text(u->content);
      else
        r.steered.push_back(protocol::joined_text(u->content));
      first = false;
    }
  }
  return r;
}

}  // namespace

std::pair<conversation_actor, std::optional<resumed_turn>> spawn_stored(
    self_ptr self, stored_thread stored, conversation_settings settings, usage_grant usage) {
  auto pending = stored.pending ? std::optional<resumed_turn>{resumed_of(stored)} : std::nullopt;
  auto meta = std::move(stored.meta);
  meta.turns.clear();  // history stays in the store
  meta.status = protocol::thread_status::idle();
  auto conv = spawn_conversation(self, std::move(meta), std::move(settings), std::move(usage));
  return {std::move(conv), std::move(pending)};
}

conversation_actor load_conversation(self_ptr self, stored_thread stored,
                                     conversation_settings settings, usage_grant usage) {
  auto [conv, pending] = spawn_stored(self, std::move(stored), std::move(settings), std::move(usage));
  // Before anything a client sends it: the turn goes on from its action.
  if (pending) self->send(conv, atom::restore::value, std::move(*pending));
  return conv;
}

namespace {

/// Loads at most this many threads to restore at once (see `to_restore`).
constexpr size_t max_restoring = 64;

void restore_next(self_ptr self);

void restore_one(self_ptr self, const std::string& id) {
  auto& st = self->state;
  if (st.shutting_down || st.threads.count(id)) return;  // loaded: it goes on already
  ++st.restoring;
  auto next = [self] {
    --self->state.restoring;
    restore_next(self);
  };
  self->request(st.svc.store, store_timeout, atom::load::value, id)
      .then(
          [self, id, next](stored_thread& stored) {
            next();
            auto& s = self->state;
            if (s.shutting_down || s.threads.count(id) || stored.archived || !stored.pending)
              return;
            with_lease(
                self, id,
                [self, id, stored]() mutable {
                  auto& now = self->state;
                  if (now.shutting_down || now.threads.count(id)) return;
                  auto settings = settings_for(stored.meta, {}, *now.svc.config);
                  // The server goes on with its own work: counted, never refused.
                  auto usage = now.svc.telemetry
                                   ? now.svc.telemetry->usage->force(
                                       usage_kind::loaded_threads,
                                       tenant_or_default(stored.meta.tenant), 0)
                                   : usage_grant{};
                  load_conversation(self, std::move(stored), std::move(settings),
                                    std::move(usage));
                },
                [](caf::error) {});  // another node goes on with it
          },
          [id, next](caf::error& err) {
            next();
            PARLEY_WARN("thread_manager event=restore_failed thread={} error={}", id,
                        caf::to_string(err));
          });
}

void restore_next(self_ptr self) {
  auto& st = self->state;
  while (st.restoring < max_restoring && !st.to_restore.empty()) {
    auto id = std::move(st.to_restore.front());
    st.to_restore.pop_front();
    restore_one(self, id);
  }
}

}  // namespace

void restore_stored(self_ptr self, const std::string& id) {
  self->state.to_restore.push_back(id);
  restore_next(self);
}

/// Resumes a thread: rejoins it if loaded, else loads it from the store. A
/// thread that is unloading answers "unloading"; the resume then waits for it
/// to be gone and loads it again, so the client still gets one real answer.
void resume_thread(self_ptr self, protocol::thread_resume_params params, client_actor client,
                   session_promise rp) {
  auto& st = self->state;
  if (auto i = st.threads.find(params.thread_id); i != st.threads.end()) {
    auto conv = i->second;
    self->request(note_client(self, conv, client), store_timeout + shutdown_timeout,
                  atom::resume::value, client, params)
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
                with_lease(
                    self, id,
                    [self, rp, params, client, stored, id]() mutable {
                      auto& now = self->state;
                      if (now.shutting_down) return rp.deliver(shutting_down_error());
                      auto conv = now.threads.count(id) ? now.threads[id] : conversation_actor{};
                      if (!conv) {
                        auto admitted = admit_thread(self, stored.meta.tenant, client);
                        if (!admitted) return rp.deliver(std::move(admitted.error()));
                        auto settings = settings_for(stored.meta, params.overrides, *now.svc.config);
                        auto [loaded, pending] = spawn_stored(
                            self, std::move(stored), std::move(settings), std::move(*admitted));
                        // Its turn goes on in the same message as the client
                        // joins: it sees the turn's events from the first.
                        if (pending)
                          return rp.delegate(note_client(self, loaded, client), atom::resume::value,
                                             std::move(client), params, std::move(*pending));
                        conv = loaded;
                      }
                      rp.delegate(note_client(self, conv, client), atom::resume::value,
                                  std::move(client), params);
                    },
                    [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
              });
}

void fork_thread(self_ptr self, const protocol::thread_fork_params& params, client_actor client,
                 session_promise rp) {
  load_stored(self, params.thread_id, params.path, rp,
              [self, rp, params, client](stored_thread source) mutable {
                auto& s = self->state;
                if (s.shutting_down) return rp.deliver(shutting_down_error());
                if (source.archived)  // Codex: unarchive it first
                  return rp.deliver(archived_error(source.meta.id));
                auto turns = fork_history(std::move(source.meta.turns), params.last_turn_id);
                if (!turns) return rp.deliver(std::move(turns.error()));
                auto settings = settings_for(source.meta, params.overrides, *s.svc.config);
                auto meta = fork_meta(source.meta, s, settings, params);
                meta.turns
                    = params.exclude_turns ? std::vector<protocol::turn>{} : std::move(*turns);
                auto context = fork_context(source.context, meta.turns);
                auto id = meta.id;
                with_lease(
                    self, id,
                    [self, rp, meta, settings, context, client]() mutable {
                      if (self->state.shutting_down) return rp.deliver(shutting_down_error());
                      auto admitted = admit_thread(self, meta.tenant, client);
                      if (!admitted) return rp.deliver(std::move(admitted.error()));
                      auto conv = spawn_conversation(self, std::move(meta), std::move(settings),
                                                     std::move(*admitted), std::move(context));
                      rp.delegate(note_client(self, conv, client), atom::open::value,
                                  std::move(client));
                    },
                    [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
              });
}

/// Unloads a loaded thread and runs `then` once it is gone from the table:
/// its "ok" comes before it quits, and a thread/read or thread/resume that
/// arrives in between would still find it loaded (a deleted thread read back
/// from a conversation about to quit). If it does not answer, `then` runs
/// anyway: the store's refusal or success is the answer either way.
void unload_then(self_ptr self, const std::string& id, const conversation_actor& conv,
                 std::function<void()> then) {
  auto once_gone = [self, id, conv](std::function<void()> next) {
    auto& threads = self->state.threads;
    auto i = threads.find(id);
    if (i != threads.end() && i->second == conv)
      self->state.on_unloaded.emplace(id, std::move(next));
    else
      next();  // already gone
  };
  self->request(conv, store_timeout, atom::shutdown::value)
      .then([once_gone, then](atom::ok) mutable { once_gone(std::move(then)); },
            [once_gone, then](caf::error& err) mutable {
              // Gone already (a second archive or delete whose request
              // reached it as it quit): its down message, which may come
              // after this error, runs the waiters in the order they came,
              // so the first request is still the first the store sees.
              if (err == caf::sec::request_receiver_down) return once_gone(std::move(then));
              then();
            });
}

void archive_thread(self_ptr self, const std::string& id, bool archive, client_actor client,
                    owed_reply<protocol::thread> rp) {
  if (!archive || self->state.threads.count(id) == 0)
    return store_archive(self, id, archive, std::move(client), rp);
  // Archiving unloads a loaded thread first (its turn ends interrupted),
  // but only once the store shows it can be archived: a failed archive
  // leaves the thread as it was. Without a turn nothing is stored yet.
  auto store_it = [self, rp, id, client]() mutable { store_archive(self, id, true, client, rp); };
  self->request(self->state.svc.store, store_timeout, atom::load::value, id)
      .then(
          [self, rp, id, store_it](stored_thread& t) mutable {
            if (t.archived || t.meta.turns.empty())
              return rp.deliver(
                  make_error(errc::invalid_request, "no rollout found for thread id " + id));
            auto i = self->state.threads.find(id);
            if (i == self->state.threads.end()) return store_it();
            unload_then(self, id, i->second, store_it);
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
}

void delete_thread(self_ptr self, const std::string& id, client_actor client,
                   owed_reply<atom::ok> rp) {
  // The store must know it first (Codex: "no rollout found"), so a delete
  // that cannot happen leaves a loaded thread loaded.
  auto erase_it = [self, rp, id, client]() mutable {
    self->request(self->state.svc.store, store_timeout, atom::erase::value, id)
        .then(
            [self, rp, id, client](atom::ok) mutable {
              // A parked thread's stored deadline has nothing left to load.
              auto& deadlines = self->state.deadlines;
              for (auto i = deadlines.begin(); i != deadlines.end();)
                i = i->second == id ? deadlines.erase(i) : std::next(i);
              rp.deliver(atom::ok::value);
              self->send(client, atom::event::value,
                         make_event(self->state.svc, protocol::thread_deleted{id}));
            },
            [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
  };
  self->request(self->state.svc.store, store_timeout, atom::load::value, id)
      .then(
          [self, erase_it](stored_thread& t) mutable {
            auto i = self->state.threads.find(t.meta.id);
            if (i == self->state.threads.end()) return erase_it();
            // Loaded: unloaded first, its turn interrupted and stored as
            // such, its subscribers told (status notLoaded, thread/closed);
            // nothing it appends afterwards is kept.
            unload_then(self, t.meta.id, i->second, erase_it);
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
}

void rename_stored(self_ptr self, const protocol::thread_name_set_params& params,
                   client_actor client, owed_reply<atom::ok> rp) {
  // A stored thread that is not loaded: the store must know it.
  auto renamed = [self, rp, params, client](atom::ok) mutable {
    rp.deliver(atom::ok::value);
    self->send(
        client, atom::event::value,
        make_event(self->state.svc, protocol::thread_name_updated{params.thread_id, params.name}));
  };
  self->request(self->state.svc.store, store_timeout, atom::load::value, params.thread_id)
      .then(
          [self, rp, params, renamed](stored_thread&) mutable {
            self->request(self->state.svc.store, store_timeout, atom::append::value,
                          params.thread_id, store_record{thread_renamed_record{params.name}})
                .then(renamed, [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
}

}  // namespace parley::thread_manager_detail
