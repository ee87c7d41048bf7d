#include "actors/store/local_store_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <list>

#include "actors/core/handlers.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"

namespace parley::store {

namespace fs = std::filesystem;

namespace {

constexpr size_t max_open_files = 256;


// -- rollout_io ----------------------------------------------------------------

/// An append that asked for durability, waiting for its file's sync.
struct awaiting_sync {
  int fd = -1;
  std::string path;
  caf::typed_response_promise<atom::ok> promise;
};

struct rollout_io_state {
  static inline const char* name = "rollout_io";
  std::unordered_map<std::string, int> fds;
  std::list<std::string> lru;  // most recent first
  /// Group commit: appends that must be durable are written at once and
  /// acknowledged after one sync per file for the whole batch (every append
  /// queued before the flush this actor sends itself).
  std::vector<awaiting_sync> unsynced;
  bool flush_queued = false;

  ~rollout_io_state() {
    for (auto& [path, fd] : fds) ::close(fd);
  }

  /// Syncs every file written since the last flush, then acknowledges the
  /// appends that waited for it (or fails those whose file did not sync).
  void sync_all() {
    flush_queued = false;
    if (unsynced.empty()) return;
    auto batch = std::move(unsynced);
    unsynced.clear();
    std::unordered_map<int, int> synced;  // fd -> errno (0: synced)
    for (auto& w : batch) {
      auto [at, fresh] = synced.emplace(w.fd, 0);
      if (fresh && ::fdatasync(w.fd) != 0) at->second = errno;
      if (at->second == 0)
        w.promise.deliver(atom::ok::value);
      else
        w.promise.deliver(
            make_error(errc::internal, "cannot sync " + w.path + ": " + std::strerror(at->second)));
    }
  }

  void close_file(const std::string& path) {
    auto i = fds.find(path);
    if (i == fds.end()) return;
    // Never close a file whose appends still wait for their sync.
    for (auto& w : unsynced)
      if (w.fd == i->second) {
        sync_all();
        break;
      }
    ::close(i->second);
    fds.erase(i);
    lru.remove(path);
  }

  /// The open file of `path`; an existing rollout opened here for the first
  /// time gets its torn tail repaired before anything is appended.
  caf::expected<int> open_file(const std::string& path, bool sync) {
    if (auto i = fds.find(path); i != fds.end()) {
      lru.remove(path);
      lru.push_front(path);
      return i->second;
    }
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return make_error(errc::internal, "cannot open " + path + ": " + std::strerror(errno));
    if (auto err = repair_torn_tail(fd, path, sync)) {
      ::close(fd);
      return err;
    }
    if (fds.size() >= max_open_files) close_file(lru.back());
    fds.emplace(path, fd);
    lru.push_front(path);
    return fd;
  }
};

using io_ptr = rollout_io_actor::stateful_pointer<rollout_io_state>;

caf::result<atom::ok> append_lines(io_ptr self, const std::string& path,
                                   const std::vector<std::string>& lines, bool sync) {
  auto fd = self->state.open_file(path, sync);
  if (!fd) return std::move(fd.error());
  struct stat before {};
  if (::fstat(*fd, &before) != 0)
    return make_error(errc::internal, "cannot stat " + path + ": " + std::strerror(errno));
  std::string data;
  for (auto& l : lines) {
    data += l;
    data += '\n';
  }
  // One write per record batch: a crash loses at most the line being written.
  size_t done = 0;
  while (done < data.size()) {
    auto n = ::write(*fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      auto err
          = make_error(errc::internal, "cannot append to " + path + ": " + std::strerror(errno));
      // A full disk must not leave half a batch for the next one to glue onto.
      [[maybe_unused]] auto rc = ::ftruncate(*fd, before.st_size);
      return err;
    }
    done += static_cast<size_t>(n);
  }
  if (!sync) return atom::ok::value;
  auto rp = self->make_response_promise<atom::ok>();
  self->state.unsynced.push_back({*fd, path, rp});
  if (!self->state.flush_queued) {
    self->state.flush_queued = true;
    // Behind every append queued so far (anonymous: nobody awaits its reply).
    caf::anon_send(caf::actor_cast<rollout_io_actor>(self), atom::flush::value);
  }
  return rp;
}

caf::result<atom::ok> archive_rollout(io_ptr self, const std::string& from, const std::string& to) {
  self->state.close_file(from);
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

rollout_io_actor::behavior_type rollout_io(io_ptr self, std::string home) {
  install_default_handlers(self, "rollout_io");
  (void)home;
  return {
      [self](atom::append, const std::string& path, const std::vector<std::string>& lines,
             bool sync) -> caf::result<atom::ok> { return append_lines(self, path, lines, sync); },
      [self](atom::load, const std::string& path) -> caf::result<stored_thread> {
        auto t = read_rollout(path);
        if (!t) return std::move(t.error());
        return std::move(*t);
      },
      [self](atom::archive, const std::string& from, const std::string& to)
          -> caf::result<atom::ok> { return archive_rollout(self, from, to); },
      [self](atom::flush) {
        self->state.sync_all();
        return atom::ok::value;
      },
  };
}

// -- index ---------------------------------------------------------------------

struct index_state {
  static inline const char* name = "thread_index";
  std::unique_ptr<thread_index> db;
};

index_actor::behavior_type index_owner(index_actor::stateful_pointer<index_state> self,
                                       std::string home) {
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
      [self](atom::put, const index_entry& e) {
        if (!self->state.db) return;
        try {
          self->state.db->upsert(e);
        } catch (const std::exception& ex) {
          PARLEY_ERROR("thread_index event=upsert_failed id={} error={}", e.id, ex.what());
        }
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

rollout_io_actor spawn_rollout_io(caf::local_actor* owner, const std::string& home) {
  return owner->spawn<caf::detached + caf::linked>(rollout_io, home);
}

index_actor spawn_index_owner(caf::local_actor* owner, const std::string& home) {
  return owner->spawn<caf::detached + caf::linked>(index_owner, home);
}

}  // namespace parley::store
