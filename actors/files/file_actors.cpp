#include "actors/files/file_actors.hpp"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>

#include "actors/core/handlers.hpp"

namespace parley::files {
namespace {

namespace fs = std::filesystem;

constexpr auto tick_interval = std::chrono::milliseconds(50);
constexpr int64_t debounce_ms = 200;  // Codex's FS_CHANGED_NOTIFICATION_DEBOUNCE
constexpr uint32_t watch_mask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO
                                | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

using watcher_ptr = fs_watcher_actor::stateful_pointer<fs_watcher_state>;

void arm(watcher_ptr self) {
  auto& st = self->state;
  if (st.ticking || st.watches.empty()) return;
  st.ticking = true;
  self->delayed_send(self, tick_interval, atom::fs_poll::value, ++st.tick);
}

void note(fs_watch_entry& w, const std::string& path, int64_t now) {
  if (w.changed.empty()) w.first_ms = now;
  w.changed.insert(path);
}

/// Reads every pending inotify event and files it under its watches.
void drain(fs_watcher_state& st) {
  alignas(inotify_event) char buf[16384];
  auto now = now_ms();
  for (;;) {
    auto n = ::read(st.fd, buf, sizeof buf);
    if (n <= 0) return;  // EAGAIN: nothing more
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      std::string name = ev->len > 0 ? std::string(ev->name) : std::string();
      for (auto& [id, w] : st.watches) {
        if ((ev->mask & IN_Q_OVERFLOW) != 0) {
          note(w, w.path, now);
          continue;
        }
        if (ev->wd != w.wd || (ev->mask & IN_IGNORED) != 0) continue;
        if (!w.only.empty()) {
          if (name == w.only) note(w, w.path, now);
        } else {
          note(w, name.empty() ? w.dir : (fs::path(w.dir) / name).native(), now);
        }
      }
    }
  }
}

void flush(watcher_ptr self, bool all) {
  auto now = now_ms();
  for (auto& [id, w] : self->state.watches) {
    if (w.changed.empty() || (!all && now - w.first_ms < debounce_ms)) continue;
    std::vector<std::string> paths(w.changed.begin(), w.changed.end());
    w.changed.clear();
    self->send(self->state.sink, atom::fs_changed::value, id, std::move(paths));
  }
}

answer start_watch(fs_watcher_state& st, const std::string& id, const root_set& roots,
                   const std::string& path) {
  if (st.watches.count(id) > 0) return failure{invalid_request, "watchId already exists: " + id};
  auto where = roots.locate(path);
  if (auto* f = std::get_if<failure>(&where)) return *f;
  auto& at = std::get<located>(where);
  fs_watch_entry w;
  w.path = at.shown;
  unique_fd dir;
  auto opened = open_confined(roots, at, O_PATH);
  struct stat s {};
  if (auto* fd = std::get_if<unique_fd>(&opened); fd && ::fstat(fd->get(), &s) == 0
                                                   && S_ISDIR(s.st_mode)) {
    dir = std::move(*fd);
    w.dir = at.shown;
  } else {
    // A file, or a path that does not exist yet (Codex watches those too):
    // its directory, for that one name.
    if (auto* f = std::get_if<failure>(&opened); f && f->os_errno != ENOENT) return *f;
    auto parent = open_parent(roots, at);
    if (auto* f = std::get_if<failure>(&parent)) return *f;
    auto& p = std::get<parent_dir>(parent);
    dir = std::move(p.dir);
    w.dir = fs::path(at.shown).parent_path().native();
    w.only = p.name;
  }
  // The directory as opened (beneath the roots), not its name again.
  auto magic = "/proc/self/fd/" + std::to_string(dir.get());
  w.wd = ::inotify_add_watch(st.fd, magic.c_str(), watch_mask);
  if (w.wd < 0) return io_failure(at.shown, errno);
  st.watches.emplace(id, std::move(w));
  return json{{"path", at.shown}};
}

}  // namespace

file_worker_actor::behavior_type file_worker(file_worker_actor::pointer self, int) {
  install_default_handlers(self, "file_worker");
  return {
      [](atom::fs_job, const file_job& job) { return file_answer{job.run()}; },
  };
}

fs_watcher_state::~fs_watcher_state() {
  if (fd >= 0) ::close(fd);
}

fs_watcher_actor::behavior_type fs_watcher(fs_watcher_actor::stateful_pointer<fs_watcher_state> self,
                                           fs_change_sink sink) {
  install_default_handlers(self, "fs_watcher");
  self->state.sink = std::move(sink);
  return {
      [self](atom::fs_watch, const std::string& id, const root_set& roots,
             const std::string& path) {
        auto& st = self->state;
        if (st.fd < 0) st.fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (st.fd < 0) return file_answer{io_failure(path, errno)};
        auto a = start_watch(st, id, roots, path);
        arm(self);
        return file_answer{std::move(a)};
      },
      [self](atom::fs_unwatch, const std::string& id) {
        auto& st = self->state;
        if (st.fd >= 0) drain(st);
        flush(self, false);  // what is due goes out before the answer
        auto i = st.watches.find(id);
        if (i != st.watches.end()) {
          int wd = i->second.wd;
          st.watches.erase(i);
          bool shared = std::any_of(st.watches.begin(), st.watches.end(),
                                    [wd](const auto& w) { return w.second.wd == wd; });
          if (!shared) ::inotify_rm_watch(st.fd, wd);
        }
        return file_answer{json::object()};
      },
      [self](atom::fs_poll, uint64_t gen) {
        auto& st = self->state;
        if (gen != st.tick) return;
        st.ticking = false;
        if (st.fd >= 0) drain(st);
        flush(self, false);
        arm(self);
      },
  };
}

}  // namespace parley::files
