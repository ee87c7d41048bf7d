#include "actors/store/local_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <caf/spawn_options.hpp>

#include "actors/core/tenant.hpp"
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <list>
#include <unordered_set>

#include "actors/core/handlers.hpp"
#include "actors/store/durability.hpp"
#include "actors/store/index_journal.hpp"
#include "actors/store/local_store_io.hpp"
#include "actors/store/memory_store.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"
#include "protocol/ids.hpp"

namespace parley::store {

namespace fs = std::filesystem;

namespace {

constexpr size_t io_shards = 2;
constexpr auto io_timeout = std::chrono::seconds(60);


// -- front -----------------------------------------------------------------------

using self_ptr = store_actor::stateful_pointer<local_store_state>;

const rollout_io_actor& io_for(self_ptr self, const std::string& path) {
  auto& io = self->state.io;
  return io[std::hash<std::string>{}(path) % io.size()];
}

/// The thread's entry goes to the index with the report of its rollout's
/// I/O actor (so the index never holds an entry for a file state it has not
/// seen written; see file_report). `settled`: no append follows that it
/// describes.
void put_index(self_ptr self, thread_file& f, bool settled = false) {
  stored_thread t;
  t.meta = f.meta;
  t.archived = f.archived;
  auto e = entry_for(t, f.path, false);
  if (!f.archived) {
    e.pending = f.pending;
    e.deadline_ms = f.deadline_ms;
  }
  f.entry_current = true;
  self->send(io_for(self, f.path), atom::put::value, std::move(e), settled);
}

/// Runs `then` once the index has committed what `path`'s I/O actor was
/// given before (its flush reports at once; the index's flush is a barrier
/// behind that report): a client that lists after an archive or a revert
/// was answered sees it. The change itself is done; a failed barrier only
/// means the index may lag for a moment, so `then` runs regardless.
template <class F>
void after_index_commit(self_ptr self, const std::string& path, F then) {
  self->request(io_for(self, path), io_timeout, atom::flush::value)
      .then(
          [self, then](atom::ok) mutable {
            self->request(self->state.index, io_timeout, atom::flush::value)
                .then([then](atom::ok) mutable { then(); },
                      [then](caf::error&) mutable { then(); });
          },
          [then](caf::error&) mutable { then(); });
}

/// What of a thread its index entry shows (a change makes the entry lag).
auto entry_key(const thread_file& f) {
  return std::make_tuple(f.meta.preview, f.meta.updated_at, f.meta.name, f.pending,
                         f.deadline_ms);
}

void set_pending(thread_file& f, const std::optional<action_record>& a) {
  f.pending = pending_code(a);
  f.pending_item = a ? a->item_id : std::string{};
  f.deadline_ms = a ? a->deadline_ms : 0;
}

/// Follows the last turn's pending action through `record`; true when the
/// index must hear it now. Only an ask must: it is what thread/list shows
/// while the thread waits (unloaded, too). The other phases are short-lived
/// and the turn's end puts the entry anyway; a restart in between reads
/// such a rollout again, since it changed after its entry was put.
bool track_pending(thread_file& f, const store_record& record) {
  if (auto* a = std::get_if<action_record>(&record)) {
    if (a->at == action_record::phase::done) {  // a request's outcome is with its model
      set_pending(f, std::nullopt);
      return false;
    }
    set_pending(f, *a);
    return a->at == action_record::phase::asked;
  }
  if (f.pending == 0) return false;
  auto* item = std::get_if<item_record>(&record);
  bool ends = std::holds_alternative<turn_started_record>(record)
              || std::holds_alternative<turn_completed_record>(record)
              || (item && protocol::item_id(item->item) == f.pending_item);
  if (ends) set_pending(f, std::nullopt);
  return false;
}

/// Registers a thread read from disk (so appends and archives find its file).
void remember(self_ptr self, const stored_thread& t, const std::string& path) {
  auto& f = self->state.files[t.meta.id];
  f.path = path;
  f.meta = t.meta;
  f.meta.turns.clear();
  f.meta.path = path;
  f.on_disk = true;
  f.listed = !t.meta.turns.empty();
  f.archived = t.archived;
  set_pending(f, t.pending);
}

/// Reads the rollout at `path` through its I/O actor, remembers the thread,
/// and answers `rp` with it.
void load_into(self_ptr self, const std::string& path,
               caf::typed_response_promise<stored_thread> rp) {
  self->request(io_for(self, path), io_timeout, atom::load::value, path)
      .then(
          [self, rp, path](stored_thread& t) mutable {
            t.archived = path.find("/archived_sessions/") != std::string::npos;
            remember(self, t, path);
            rp.deliver(std::move(t));
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
}

/// Finds a thread's rollout: this process's table, then the index, then a scan.
template <class Then>
void locate(self_ptr self, const std::string& id, Then then, std::function<void(caf::error)> fail) {
  auto& st = self->state;
  if (auto i = st.files.find(id); i != st.files.end() && i->second.on_disk) {
    then(i->second.path);
    return;
  }
  if (auto h = st.located.find(id); h != st.located.end()) {
    auto path = std::move(h->second);
    st.located.erase(h);
    std::error_code ec;
    if (fs::exists(path, ec)) {
      then(path);
      return;
    }
  }
  self->request(st.index, io_timeout, atom::get::value, id)
      .then([then](index_entry& e) mutable { then(e.path); },
            [self, id, then, fail](caf::error&) mutable {
              if (auto p = find_rollout(self->state.config->home, id))
                then(*p);
              else
                fail(make_error(errc::invalid_request, "no rollout found for thread id " + id));
            });
}

/// Whose a thread is: this process's table, then the index (a thread's
/// tenant never changes, so a row that lags its file still says it), then
/// its rollout read (a thread without turns is not indexed).
caf::result<std::string> on_tenant(self_ptr self, const std::string& id) {
  auto& st = self->state;
  if (auto i = st.files.find(id); i != st.files.end() && i->second.on_disk)
    return i->second.meta.tenant;
  auto rp = self->make_response_promise<std::string>();
  self->request(st.index, io_timeout, atom::get::value, id)
      .then(
          [self, rp, id](index_entry& e) mutable {
            auto& located = self->state.located;
            if (located.size() >= 4096) located.clear();
            located[id] = e.path;
            rp.deliver(e.tenant);
          },
            [self, rp, id](caf::error&) mutable {
              self->request(caf::actor_cast<store_actor>(self), io_timeout, atom::load::value, id)
                  .then([rp](stored_thread& t) mutable { rp.deliver(t.meta.tenant); },
                        [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
            });
  return rp;
}

std::string archived_path(const std::string& home, const std::string& path) {
  auto name = fs::path(path).filename().string();
  if (!is_zstd(name)) name += ".zst";
  return home + "/archived_sessions/" + name;
}

std::string unarchived_path(const std::string& home, const protocol::thread& meta) {
  return home + "/" + rollout_relative_path(meta.created_at, meta.id);
}

// -- the store's handlers --------------------------------------------------------

caf::result<atom::ok> on_append(self_ptr self, const std::string& id, const store_record& record) {
  auto& st = self->state;
  if (st.sealed)
    return make_error(errc::internal, "the server is stopping: nothing more is stored");
  bool opens = std::holds_alternative<thread_created_record>(record)
               || std::holds_alternative<turn_started_record>(record);
  // A new thread while the store cannot write is refused now, rather than
  // accepted and lost. (A turn is refused by its conversation before it
  // starts; once started, its records wait in order like any other.)
  if (std::holds_alternative<thread_created_record>(record) && st.telemetry
      && !st.telemetry->store.writable())
    return st.telemetry->store.refusal();
  bool durable = st.config->durability != runtime_config::durability_kind::none;
  if (auto* created = std::get_if<thread_created_record>(&record)) {
    auto& f = st.files[id];
    f.meta = created->meta;
    f.meta.turns.clear();
    f.path = f.meta.path.value_or(st.config->home + "/"
                                  + rollout_relative_path(f.meta.created_at, id));
    f.meta.path = f.path;
    // Its session metadata (and a fork's copied history) is written before
    // thread/start answers: a thread that was reported started exists. Synced
    // as --durability says: with `turn`, a fork's copied turns are, a new
    // thread's metadata is with its first turn's end (a sync per new thread
    // would double the cost of starting one).
    auto lines = encode_thread(created->meta, created->context);
    f.on_disk = true;
    f.listed = !created->meta.turns.empty();  // threads without turns are not listed
    if (f.listed) put_index(self, f);
    bool sync = durable
                && (f.listed || st.config->durability == runtime_config::durability_kind::item);
    return self->delegate(io_for(self, f.path), atom::append::value, f.path, std::move(lines),
                          sync, true, true);
  }
  auto i = st.files.find(id);
  if (i == st.files.end())
    return make_error(errc::internal, "store: append to an unknown thread " + id);
  auto& f = i->second;
  auto shown = entry_key(f);
  std::vector<std::string> lines;
  bool first = !f.on_disk;
  if (first) lines.push_back(encode_session_meta(f.meta));
  line_stamp stamp{protocol::unix_ms()};
  for (auto& l : encode_record(f.meta, record, stamp)) lines.push_back(std::move(l));
  bool first_turn = std::holds_alternative<turn_started_record>(record) && !f.listed;
  if (!std::holds_alternative<context_record>(record)
      && !std::holds_alternative<action_record>(record)
      && !std::holds_alternative<compacted_record>(record)
      && !std::holds_alternative<goal_record>(record)
      && !std::holds_alternative<injected_record>(record)) {  // these change no metadata
    stored_thread tracker{f.meta, f.archived, {}, {}, std::nullopt, std::nullopt};
    apply_record(tracker, record);
    f.meta = std::move(tracker.meta);
    f.meta.turns.clear();
  }
  // A reader dates a thread by its latest event line: the row says the same
  // (the record's own times may lie a second before the line's stamp).
  if (stamp.dated) f.meta.updated_at = std::max(f.meta.updated_at, stamp.at_ms / 1000);
  f.on_disk = true;
  if (first_turn) f.listed = true;
  bool pending_moved = track_pending(f, record);
  if (first_turn || pending_moved || std::holds_alternative<turn_completed_record>(record)
      || (f.listed && (std::holds_alternative<thread_renamed_record>(record)
                       || std::holds_alternative<git_info_record>(record))))
    put_index(self, f);
  else if (entry_key(f) != shown)
    f.entry_current = false;  // mid-turn: the turn's end puts it
  return self->delegate(io_for(self, f.path), atom::append::value, f.path, std::move(lines),
                        must_sync(*st.config, record), opens || first, f.entry_current);
}

caf::result<stored_thread> on_load(self_ptr self, const std::string& id) {
  auto& st = self->state;
  auto rp = self->make_response_promise<stored_thread>();
  if (auto i = st.files.find(id); i != st.files.end() && !i->second.on_disk) {
    rp.deliver(
        stored_thread{i->second.meta, false, {}, {}, std::nullopt, std::nullopt});  // not written yet: no turns
    return rp;
  }
  locate(
      self, id, [self, rp](const std::string& path) { load_into(self, path, rp); },
      [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
  return rp;
}

caf::result<stored_thread> on_load_path(self_ptr self, const rollout_path& p) {
  if (auto err = validate_rollout_path(p.path)) return err;
  auto rp = self->make_response_promise<stored_thread>();
  load_into(self, fs::absolute(p.path).lexically_normal().string(), rp);
  return rp;
}

list_query query_for(const protocol::thread_list_params& params) {
  list_query q;
  q.key = params.sort_key == "created_at" ? list_query::sort_key::created_at
                                          : list_query::sort_key::updated_at;
  q.descending = params.sort_direction != "asc";
  q.archived = params.archived;
  q.cwds = params.cwds;
  q.model_providers = params.model_providers;
  q.sources = params.source_kinds;  // in the query: a page is full even when few match
  q.search = params.search_term;
  q.cursor = params.cursor;
  q.tenant = params.tenant;
  q.limit = params.limit.value_or(25);
  return q;
}

/// A listed thread as thread/list shows it: not loaded, no turns.
protocol::thread listed_thread(const index_entry& e) {
  protocol::thread t;
  t.id = e.id;
  t.preview = e.preview;
  t.model_provider = e.model_provider;
  t.model = e.model;
  t.created_at = e.created_at;
  t.updated_at = e.updated_at;
  // A thread whose turn waits on a person shows it (Codex's active with
  // waitingOnApproval) before anything loads it again.
  t.status = e.pending != 0
                 ? protocol::thread_status::active(e.pending == 1)
                 : protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};
  t.status.waiting_on_user_input = e.pending == question_asked_code;
  t.path = e.path;
  t.cwd = e.cwd;
  t.cli_version = "";
  t.source = e.source;
  t.name = e.name;
  t.forked_from_id = e.forked_from;
  t.tenant = e.tenant;
  if (e.git_info) {
    auto git = nlohmann::json::parse(*e.git_info, nullptr, false);
    if (git.is_object()) {
      try {
        t.git = protocol::decode<protocol::git_info>(git);
      } catch (const protocol::decode_error&) {
      }
    }
  }
  return t;
}

caf::result<protocol::thread_list_response> on_list(self_ptr self,
                                                    const protocol::thread_list_params& params) {
  auto rp = self->make_response_promise<protocol::thread_list_response>();
  self->request(self->state.index, io_timeout, atom::list::value, query_for(params))
      .then(
          [rp](list_page& page) mutable {
            protocol::thread_list_response r;
            for (auto& e : page.entries) r.data.push_back(listed_thread(e));
            r.next_cursor = page.next_cursor;
            rp.deliver(std::move(r));
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
  return rp;
}

/// Moves the loaded thread `t`'s rollout at `from` into archived_sessions
/// (`archive`) or back, then answers `rp` with the thread.
void move_rollout(self_ptr self, caf::typed_response_promise<stored_thread> rp,
                  const std::string& from, bool archive, stored_thread t) {
  auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
  bool is_archived = from.find("/archived_sessions/") != std::string::npos;
  auto& home = self->state.config->home;
  auto to = archive ? archived_path(home, from) : unarchived_path(home, t.meta);
  auto finish = [self, rp, t, to, archive]() mutable {
    t.archived = archive;
    t.meta.path = to;
    remember(self, t, to);
    put_index(self, self->state.files[t.meta.id], true);
    after_index_commit(self, to, [rp, t = std::move(t)]() mutable { rp.deliver(std::move(t)); });
  };
  if (is_archived == archive) {  // Codex: nothing to move is an error
    fail(make_error(errc::invalid_request, std::string{archive ? "no rollout found for thread id "
                                                               : "no archived rollout found for "
                                                                 "thread id "}
                                               + t.meta.id));
    return;
  }
  self->request(io_for(self, from), io_timeout, atom::archive::value, from, to)
      .then([finish](atom::ok) mutable { finish(); },
            [fail](caf::error& err) mutable { fail(std::move(err)); });
}

caf::result<stored_thread> on_archive(self_ptr self, const std::string& id, bool archive) {
  auto rp = self->make_response_promise<stored_thread>();
  auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
  // Read it first: the metadata is needed for the unarchived location
  // and for the reply.
  locate(
      self, id,
      [self, rp, archive, fail](const std::string& from) mutable {
        self->request(io_for(self, from), io_timeout, atom::load::value, from)
            .then(
                [self, rp, archive, from](stored_thread& t) mutable {
                  move_rollout(self, rp, from, archive, std::move(t));
                },
                [fail](caf::error& err) mutable { fail(std::move(err)); });
      },
      fail);
  return rp;
}

/// thread/delete: the rollout first, then the index entry (rollout_delete.hpp
/// says why in that order).
caf::result<atom::ok> on_erase(self_ptr self, const std::string& id) {
  auto rp = self->make_response_promise<atom::ok>();
  auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
  if (self->state.sealed) {
    fail(make_error(errc::internal, "the server is stopping: nothing more is stored"));
    return rp;
  }
  locate(
      self, id,
      [self, rp, id, fail](const std::string& where) mutable {
        // A copy: `where` may be the entry's own path, which the erase frees.
        std::string path = where;
        // Forgotten now: an append that comes later is refused (unknown
        // thread) instead of writing the file again.
        self->state.files.erase(id);
        self->request(io_for(self, path), io_timeout, atom::erase::value, path)
            .then(
                [self, rp, id, fail](atom::ok) mutable {
                  self->request(self->state.index, io_timeout, atom::erase::value, id)
                      .then([rp](atom::ok) mutable { rp.deliver(atom::ok::value); },
                            [fail](caf::error& err) mutable { fail(std::move(err)); });
                },
                [fail](caf::error& err) mutable { fail(std::move(err)); });
      },
      fail);
  return rp;
}

/// thread/revert: the I/O actor rewrites the rollout (after every append
/// queued before, in its order) and reads it back; the table and the index
/// then describe the kept turns (a thread left without turns is not listed).
caf::result<stored_thread> on_revert(self_ptr self, const std::string& id,
                                     const std::string& turn_id) {
  auto rp = self->make_response_promise<stored_thread>();
  auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
  if (self->state.sealed) {
    fail(make_error(errc::internal, "the server is stopping: nothing more is stored"));
    return rp;
  }
  locate(
      self, id,
      [self, rp, id, turn_id, fail](const std::string& where) mutable {
        std::string path = where;
        self->request(io_for(self, path), io_timeout, atom::revert::value, path, turn_id)
            .then(
                [self, rp, path](stored_thread& t) mutable {
                  remember(self, t, path);
                  auto& f = self->state.files[t.meta.id];
                  if (f.listed) {
                    put_index(self, f, true);
                    after_index_commit(self, path, [rp, t = std::move(t)]() mutable {
                      rp.deliver(std::move(t));
                    });
                  } else {  // as Codex: a thread is listed once it has a turn
                    auto thread_id = t.meta.id;
                    auto done = [rp, t = std::move(t)]() mutable { rp.deliver(std::move(t)); };
                    self->request(self->state.index, io_timeout, atom::erase::value, thread_id)
                        .then([done](atom::ok) mutable { done(); },
                              [done](caf::error&) mutable { done(); });
                  }
                },
                [fail](caf::error& err) mutable { fail(std::move(err)); });
      },
      fail);
  return rp;
}

caf::result<std::vector<pending_thread>> on_pending(self_ptr self) {
  auto rp = self->make_response_promise<std::vector<pending_thread>>();
  // Waits for a rebuild of a new index (every rollout read) when one runs.
  self->request(self->state.index, std::chrono::seconds(3600), atom::pending::value)
      .then(
          [rp](std::vector<pending_entry>& entries) mutable {
            std::vector<pending_thread> out;
            for (auto& e : entries) {
              auto phase = phase_of_code(e.pending);
              if (!phase) continue;
              out.push_back({std::move(e.id), *phase, e.deadline_ms});
            }
            rp.deliver(std::move(out));
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
  return rp;
}

/// Refuses later appends, then answers once every I/O actor has written and
/// synced what it was given before.
caf::result<atom::ok> on_seal(self_ptr self) {
  auto& st = self->state;
  st.sealed = true;
  auto rp = self->make_response_promise<atom::ok>();
  auto left = std::make_shared<size_t>(st.io.size());
  auto one_done = [rp, left]() mutable {
    if (--*left == 0) rp.deliver(atom::ok::value);
  };
  for (auto& io : st.io)
    self->request(io, io_timeout, atom::flush::value)
        .then([one_done](atom::ok) mutable { one_done(); },
              [one_done](caf::error&) mutable { one_done(); });
  return rp;
}

/// The orderly stop: every I/O actor syncs and reports (retiring its
/// journal), then the index commits; bounded, whatever answers.
void close_and_quit(self_ptr self, caf::error reason) {
  auto& st = self->state;
  if (st.closing) return;
  st.closing = true;
  st.sealed = true;
  auto left = std::make_shared<size_t>(st.io.size());
  auto quit = [self, reason]() mutable { self->quit(reason); };
  auto one_done = [self, left, quit]() mutable {
    if (--*left > 0) return;
    self->request(self->state.index, std::chrono::seconds(30), atom::flush::value)
        .then([quit](atom::ok) mutable { quit(); }, [quit](caf::error&) mutable { quit(); });
  };
  for (auto& io : st.io)
    self->request(io, std::chrono::seconds(30), atom::shutdown::value)
        .then([one_done](atom::ok) mutable { one_done(); },
              [one_done](caf::error&) mutable { one_done(); });
  if (st.io.empty()) quit();
}

}  // namespace

std::string index_path(const std::string& home) {
  return home + "/parley-index.sqlite";
}

int64_t mtime_ns(const struct stat& sb) {
  return static_cast<int64_t>(sb.st_mtim.tv_sec) * 1'000'000'000 + sb.st_mtim.tv_nsec;
}

bool entry_describes(const index_entry& e, const std::string& path, const struct stat& sb) {
  return e.path == path && e.file_size == sb.st_size && e.file_mtime_ns == mtime_ns(sb)
         && e.file_inode == static_cast<int64_t>(sb.st_ino);
}

index_entry entry_for(const stored_thread& t, const std::string& path, bool stat_file) {
  index_entry e;
  e.id = t.meta.id;
  e.path = path;
  e.cwd = t.meta.cwd;
  e.preview = t.meta.preview;
  e.name = t.meta.name;
  e.created_at = t.meta.created_at;
  e.updated_at = t.meta.updated_at;
  e.archived = t.archived;
  e.forked_from = t.meta.forked_from_id;
  e.source = t.meta.source;
  e.model_provider = t.meta.model_provider;
  e.model = t.meta.model;
  e.tenant = tenant_or_default(t.meta.tenant);
  if (t.meta.git) e.git_info = nlohmann::json(*t.meta.git).dump();
  struct stat sb {};
  if (stat_file && ::stat(path.c_str(), &sb) == 0) {
    e.file_mtime_ns = mtime_ns(sb);
    e.file_size = static_cast<int64_t>(sb.st_size);
    e.file_inode = static_cast<int64_t>(sb.st_ino);
  }
  // An archived thread waits on nobody: it goes on only once unarchived and resumed.
  if (t.pending && !t.archived) {
    e.pending = pending_code(t.pending);
    e.deadline_ms = t.pending->deadline_ms;
  }
  return e;
}

bool reindex_rollout(thread_index& index, const std::string& path) {
  auto id = id_from_file_name(path);
  if (!id) return false;
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) {  // gone (deleted, moved)
    auto row = index.find(*id);
    if (row && row->path == path) index.remove(*id);
    return false;
  }
  auto t = read_rollout(path);
  if (!t) {
    PARLEY_WARN("thread_index event=unreadable_rollout path={} error={}", path,
                message_of(t.error()));
    return false;
  }
  t->archived = path.find("/archived_sessions/") != std::string::npos;
  if (t->meta.turns.empty()) {  // as Codex: a thread is listed once it has a turn
    auto row = index.find(*id);
    if (row && row->path == path) index.remove(*id);
    return true;
  }
  index.upsert(entry_for(*t, path));
  return true;
}

size_t sync_index(thread_index& index, const std::string& home) {
  std::unordered_map<std::string, index_entry> known;
  for (auto& e : index.all()) known.emplace(e.path, std::move(e));
  size_t reread = 0;
  index.batch([&] {
    for (auto sub : {"sessions", "archived_sessions"}) {
      for (auto& path : list_rollouts(home + "/" + sub)) {
        struct stat sb {};
        if (::stat(path.c_str(), &sb) != 0) continue;
        auto k = known.find(path);
        if (k != known.end()) {
          bool fresh = entry_describes(k->second, path, sb);
          known.erase(k);
          if (fresh) continue;
        }
        if (reindex_rollout(index, path)) ++reread;
      }
    }
    for (auto& [path, e] : known) index.remove(e.id);  // the file is gone
  });
  return reread;
}

size_t sync_journaled(thread_index& index, const std::vector<std::string>& paths) {
  std::unordered_set<std::string> seen;
  size_t reread = 0;
  index.batch([&] {
    for (auto& path : paths) {
      if (!seen.insert(path).second) continue;
      auto id = id_from_file_name(path);
      if (!id) continue;
      struct stat sb {};
      if (::stat(path.c_str(), &sb) == 0) {
        auto row = index.find(*id);
        if (row && entry_describes(*row, path, sb)) continue;  // its row says what it holds
      }
      if (reindex_rollout(index, path)) ++reread;
    }
  });
  return reread;
}

caf::expected<size_t> rebuild_index(const std::string& home) {
  std::error_code ec;
  for (auto suffix : {"", "-wal", "-shm"}) fs::remove(index_path(home) + suffix, ec);
  fs::remove_all(journal_dir(home), ec);  // a rebuild reads every rollout anyway
  try {
    thread_index index{index_path(home)};
    sync_index(index, home);
    return index.size();
  } catch (const std::exception& e) {
    return make_error(errc::internal, e.what());
  }
}

store_actor::behavior_type local_store(store_actor::stateful_pointer<local_store_state> self,
                                       std::shared_ptr<const runtime_config> config,
                                       std::shared_ptr<runtime_telemetry> telemetry) {
  install_default_handlers(self, "local_store");
  self->state.config = std::move(config);
  self->state.telemetry = telemetry;
  auto stamp = journal_stamp();
  // Until the index actor has opened the index and read the journals (its
  // own thread): stats must not say ready before it has begun.
  if (telemetry) telemetry->index_sync.phase = index_sync_progress::opening;
  self->state.index = spawn_index_owner(self, self->state.config->home, stamp,
                                        self->state.config->prune_older_than, telemetry);
  for (size_t i = 0; i < io_shards; ++i) {
    rollout_io_setup setup;
    setup.index = self->state.index;
    setup.journal_dir = journal_dir(self->state.config->home);
    setup.journal_stamp = stamp;
    setup.shard = static_cast<int>(i);
    setup.backlog_bytes = self->state.config->store_backlog_bytes / io_shards;
    setup.ops = self->state.config->store_file_ops;
    setup.telemetry = telemetry;
    self->state.io.push_back(spawn_rollout_io(self, std::move(setup)));
  }
  // Any stop (the server's, or a part of the store that died) first lets the
  // I/O actors write and report what they hold and the index commit it, so
  // the next start reads nothing again.
  self->set_exit_handler([self](caf::exit_msg& msg) { close_and_quit(self, msg.reason); });
  return {
      [self](atom::append, const std::string& id, const store_record& record)
          -> caf::result<atom::ok> { return on_append(self, id, record); },
      [self](atom::load, const std::string& id) -> caf::result<stored_thread> {
        return on_load(self, id);
      },
      [self](atom::load, const rollout_path& p) -> caf::result<stored_thread> {
        return on_load_path(self, p);
      },
      [self](atom::tenant, const std::string& id) { return on_tenant(self, id); },
      [self](atom::list, const protocol::thread_list_params& params)
          -> caf::result<protocol::thread_list_response> { return on_list(self, params); },
      [self](atom::archive, const std::string& id, bool archive) -> caf::result<stored_thread> {
        return on_archive(self, id, archive);
      },
      [self](atom::erase, const std::string& id) { return on_erase(self, id); },
      [self](atom::revert, const std::string& id, const std::string& turn_id) {
        return on_revert(self, id, turn_id);
      },
      [self](atom::pending) { return on_pending(self); },
      [self](atom::seal) { return on_seal(self); },
      // A single node: every lease is this node's (see store_actor).
      [](atom::lease, const std::string&) { return uint64_t{0}; },
      [](atom::release, const std::string&) {},
      [](atom::owner, const std::string&) { return std::string{}; },
      [](atom::members) { return cluster_view{}; },
      [](atom::orphans, const std::string&) { return std::vector<orphan_thread>{}; },
      [](atom::rejoin) { return uint64_t{0}; },
  };
}

}  // namespace parley::store
