#include "actors/store/local_store_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "actors/core/handlers.hpp"
#include "actors/store/rollout_delete.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/rollout_revert.hpp"
#include "actors/store/rollout_writer.hpp"

namespace parley::store {

namespace fs = std::filesystem;

namespace {

// -- rollout_io ----------------------------------------------------------------

constexpr auto first_retry = std::chrono::milliseconds(100);
constexpr auto last_retry = std::chrono::milliseconds(500);

struct rollout_io_state {
  static inline const char* name = "rollout_io";
  std::unique_ptr<rollout_writer> writer;
  std::shared_ptr<runtime_telemetry> telemetry;  // its store health hears faults
  int shard = 0;
  /// Group commit: appends that must be durable are written at once and
  /// acknowledged after one sync per file for the whole batch (every append
  /// queued before the flush this actor sends itself).
  bool flush_queued = false;
  bool retry_armed = false;
  bool faulted = false;
  std::chrono::milliseconds backoff = first_retry;
};

using io_ptr = rollout_io_actor::stateful_pointer<rollout_io_state>;

/// After any write: a flush behind the appends queued so far when one waits
/// for it; while records wait for the disk, a retry, and the health says so.
void after_io(io_ptr self) {
  auto& st = self->state;
  if (st.writer->needs_flush() && !st.flush_queued) {
    st.flush_queued = true;
    // Anonymous: nobody awaits its reply.
    caf::anon_send(caf::actor_cast<rollout_io_actor>(self), atom::flush::value);
  }
  if (st.writer->faulted()) {
    if (!st.faulted) {
      st.faulted = true;
      st.backoff = first_retry;
      if (st.telemetry) st.telemetry->store.set_fault(st.shard, st.writer->fault());
    }
    if (!st.retry_armed) {
      st.retry_armed = true;
      self->delayed_send(self, st.backoff, atom::retry::value);
      st.backoff = std::min<std::chrono::milliseconds>(st.backoff * 2, last_retry);
    }
  } else if (st.faulted) {
    st.faulted = false;
    if (st.telemetry) st.telemetry->store.clear_fault(st.shard);
  }
}

caf::result<atom::ok> append_lines(io_ptr self, const std::string& path,
                                   const std::vector<std::string>& lines, bool sync, bool opens) {
  auto rp = self->make_response_promise<atom::ok>();
  self->state.writer->append(path, lines, sync, opens, [rp](caf::error err) mutable {
    if (err)
      rp.deliver(std::move(err));
    else
      rp.deliver(atom::ok::value);
  });
  after_io(self);
  return rp;
}

caf::result<atom::ok> archive_rollout(io_ptr self, const std::string& from, const std::string& to) {
  if (auto err = self->state.writer->close(from)) return err;
  std::error_code ec;
  fs::create_directories(fs::path(to).parent_path(), ec);
  auto lines = read_rollout_lines(from);
  if (!lines) return std::move(lines.error());
  std::string content;
  for (auto& l : *lines) content += l + "\n";
  if (is_zstd(to)) {
    if (auto err = write_compressed(to, content)) return err;
  } else {
    auto tmp = to + ".tmp";
    {
      std::FILE* f = std::fopen(tmp.c_str(), "wb");
      if (!f) return make_error(errc::internal, "cannot write " + tmp);
      std::fwrite(content.data(), 1, content.size(), f);
      std::fflush(f);
      ::fsync(::fileno(f));
      std::fclose(f);
    }
    fs::rename(tmp, to, ec);
    if (ec) return make_error(errc::internal, "cannot move to " + to + ": " + ec.message());
  }
  fs::remove(from, ec);
  return atom::ok::value;
}

/// thread/revert: after every append queued before it (this actor's order),
/// the file is closed, rewritten whole beside itself and renamed over.
caf::result<stored_thread> revert_rollout(io_ptr self, const std::string& path,
                                          const std::string& turn_id) {
  if (is_zstd(path))
    return make_error(errc::invalid_request, "cannot revert an archived thread: " + path);
  if (auto err = self->state.writer->close(path)) return err;
  auto lines = read_rollout_lines(path);
  if (!lines) return std::move(lines.error());
  auto kept = reverted_lines(*lines, turn_id);
  if (!kept) return std::move(kept.error());
  if (auto err = replace_rollout(path, *kept)) return err;
  auto t = decode_rollout(*kept, path);
  if (!t) return std::move(t.error());
  return std::move(*t);
}

rollout_io_actor::behavior_type rollout_io(io_ptr self, rollout_io_setup setup) {
  install_default_handlers(self, "rollout_io");
  rollout_writer::limits limits;
  limits.backlog_bytes = setup.backlog_bytes;
  auto ops = setup.ops ? setup.ops : posix_file_ops();
  self->state.writer = std::make_unique<rollout_writer>(std::move(ops), limits);
  self->state.telemetry = std::move(setup.telemetry);
  self->state.shard = setup.shard;
  return {
      [self](atom::append, const std::string& path, const std::vector<std::string>& lines,
             bool sync, bool opens) -> caf::result<atom::ok> {
        return append_lines(self, path, lines, sync, opens);
      },
      [self](atom::load, const std::string& path) -> caf::result<stored_thread> {
        auto t = read_rollout(path);
        if (!t) return std::move(t.error());
        return std::move(*t);
      },
      [self](atom::archive, const std::string& from, const std::string& to)
          -> caf::result<atom::ok> { return archive_rollout(self, from, to); },
      [self](atom::erase, const std::string& path) -> caf::result<atom::ok> {
        // After every append queued before it (this actor's order): nothing
        // written later recreates the file.
        if (auto err = self->state.writer->close(path)) return err;
        if (auto err = delete_rollout(path)) return err;
        return atom::ok::value;
      },
      [self](atom::revert, const std::string& path, const std::string& turn_id)
          -> caf::result<stored_thread> { return revert_rollout(self, path, turn_id); },
      [self](atom::flush) {
        self->state.flush_queued = false;
        self->state.writer->flush();
        after_io(self);
        return atom::ok::value;
      },
      [self](atom::retry) {
        auto& st = self->state;
        st.retry_armed = false;
        if (st.writer->retry()) st.backoff = first_retry;
        after_io(self);
      },
  };
}

// -- index ---------------------------------------------------------------------

struct index_state {
  static inline const char* name = "thread_index";
  std::unique_ptr<thread_index> db;
  /// Entries the database refused (a full disk): written again, newest
  /// first, until it takes them; the rollouts stay the truth meanwhile.
  std::unordered_map<std::string, index_entry> unwritten;
  bool retry_armed = false;
};

using index_ptr = index_actor::stateful_pointer<index_state>;

void put_entries(index_ptr self, std::vector<index_entry> entries) {
  auto& st = self->state;
  try {
    st.db->batch([&] {
      for (auto& e : entries) st.db->upsert(e);
    });
    for (auto& e : entries) st.unwritten.erase(e.id);
    return;
  } catch (const std::exception& ex) {
    if (st.unwritten.empty())
      PARLEY_ERROR("thread_index event=upsert_failed error=\"{}\" (kept to write again)",
                   ex.what());
  }
  for (auto& e : entries) st.unwritten[e.id] = std::move(e);
  if (!st.retry_armed) {
    st.retry_armed = true;
    self->delayed_send(self, std::chrono::seconds(1), atom::retry::value);
  }
}

index_actor::behavior_type index_owner(index_ptr self, std::string home) {
  install_default_handlers(self, "thread_index");
  try {
    self->state.db = std::make_unique<thread_index>(index_path(home));
    auto reread = sync_index(*self->state.db, home);
    PARLEY_INFO("thread_index event=synced threads={} reindexed={}", self->state.db->size(),
                reread);
  } catch (const std::exception& e) {
    PARLEY_ERROR("thread_index event=open_failed error={}", e.what());
  }
  return {
      [self](atom::put, index_entry& e) {
        if (!self->state.db) return;
        put_entries(self, {std::move(e)});
      },
      [self](atom::retry) {
        auto& st = self->state;
        st.retry_armed = false;
        std::vector<index_entry> entries;
        for (auto& [id, e] : st.unwritten) entries.push_back(e);
        if (entries.empty()) return;
        put_entries(self, std::move(entries));
        if (st.unwritten.empty())
          PARLEY_INFO("thread_index event=writable_again (entries that waited are written)");
      },
      [self](atom::erase, const std::string& id) -> caf::result<atom::ok> {
        auto& st = self->state;
        st.unwritten.erase(id);  // an entry waiting to be written must not bring it back
        if (!st.db) return atom::ok::value;  // no index: the next start rebuilds one
        try {
          st.db->remove(id);
        } catch (const std::exception& e) {
          // The rollout is gone already: the next start's sync drops the entry.
          return make_error(errc::internal, std::string{"thread index: "} + e.what());
        }
        return atom::ok::value;
      },
      [self](atom::get, const std::string& id) -> caf::result<index_entry> {
        if (self->state.db)
          if (auto e = self->state.db->find(id)) return *e;
        return make_error(errc::invalid_request, "no rollout found for thread id " + id);
      },
      [self](atom::pending) -> caf::result<std::vector<pending_entry>> {
        if (!self->state.db) return make_error(errc::internal, "the thread index is not available");
        try {
          return self->state.db->pending();
        } catch (const std::exception& e) {
          return make_error(errc::internal, e.what());
        }
      },
      [self](atom::list, const list_query& q) -> caf::result<list_page> {
        if (!self->state.db) return make_error(errc::internal, "the thread index is not available");
        try {
          return self->state.db->list(q);
        } catch (const std::exception& e) {
          return make_error(errc::internal, e.what());
        }
      },
  };
}

}  // namespace

rollout_io_actor spawn_rollout_io(caf::local_actor* owner, rollout_io_setup setup) {
  return owner->spawn<caf::detached + caf::linked>(rollout_io, std::move(setup));
}

index_actor spawn_index_owner(caf::local_actor* owner, const std::string& home) {
  return owner->spawn<caf::detached + caf::linked>(index_owner, home);
}

}  // namespace parley::store
