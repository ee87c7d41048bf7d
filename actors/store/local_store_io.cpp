#include "actors/store/local_store_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <unordered_set>
#include <vector>

#include "actors/core/handlers.hpp"
#include "actors/store/index_journal.hpp"
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
  /// What changed since the last report to the index, by path.
  index_actor index;
  std::unique_ptr<index_journal> journal;
  bool journal_failed = false;  // logged once
  std::unordered_map<std::string, file_report> reports;
  bool report_queued = false;
  bool report_timer = false;
  /// Rollouts whose rows were last reported unsettled (mid-turn).
  std::unordered_set<std::string> unsettled;
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

/// Paths a journal generation names before it is retired (its file is
/// deleted once the index has committed them): what a start after a crash
/// stats at most, per I/O actor and generation.
constexpr size_t journal_generation = 512;

/// Names `path` in the journal before it changes.
void journal_note(io_ptr self, const std::string& path) {
  auto& st = self->state;
  if (!st.journal || st.journal->note(path)) return;
  if (!st.journal_failed)
    PARLEY_WARN("rollout_io event=journal_failed path={} (a crash now needs `parley store "
                "reindex`)",
                path);
  st.journal_failed = true;
}

/// How long a change waits to be reported when nothing reports it sooner
/// (a sync, a new entry): what a kill -9 can make a start read again.
constexpr auto report_delay = std::chrono::milliseconds(200);

/// A report is due: `now` (a message behind those queued), else after
/// report_delay.
void arm_report(io_ptr self, bool now) {
  auto& st = self->state;
  if (now && !st.report_queued) {
    st.report_queued = true;
    caf::anon_send(caf::actor_cast<rollout_io_actor>(self), atom::put::value);
  } else if (!now && !st.report_timer) {
    st.report_timer = true;
    self->delayed_send(self, report_delay, atom::put::value);
  }
}

file_report& report_for(io_ptr self, const std::string& path) {
  auto [i, added] = self->state.reports.try_emplace(path);
  if (added) i->second.path = path;
  return i->second;
}

/// Sends the index what changed: each file stat'ed as it is now; with
/// `retire_all`, the journal's generation ends here (the orderly stop).
void report(io_ptr self, bool retire_all = false) {
  auto& st = self->state;
  index_report rep;
  rep.files.reserve(st.reports.size());
  for (auto& [path, r] : st.reports) {
    struct stat sb {};
    if (::stat(path.c_str(), &sb) == 0) {
      r.size = static_cast<int64_t>(sb.st_size);
      r.mtime_ns = mtime_ns(sb);
      r.inode = static_cast<int64_t>(sb.st_ino);
    } else {
      r.settled = false;
    }
    if (!st.writer->settled(path)) r.settled = false;  // records wait for the disk
    if (!r.read_only) {
      if (r.settled)
        st.unsettled.erase(path);
      else
        st.unsettled.insert(path);
    }
    rep.files.push_back(std::move(r));
  }
  st.reports.clear();
  // A generation ends only while nothing waits for the disk: a record
  // written later by a retry must still be named by a journal. The rows
  // left unsettled are named again in the next generation before this one
  // goes: a start after a crash must still look at them.
  if (st.journal && !st.writer->faulted()
      && (retire_all ? st.journal->noted() > 0 : st.journal->noted() >= journal_generation)) {
    rep.retire = st.journal->rotate();
    for (auto& path : st.unsettled) journal_note(self, path);
  }
  if (rep.files.empty() && rep.retire.empty()) return;
  if (st.index) self->send(st.index, atom::put::value, std::move(rep));
}

caf::result<atom::ok> append_lines(io_ptr self, const std::string& path,
                                   const std::vector<std::string>& lines, bool sync, bool opens,
                                   bool current) {
  journal_note(self, path);
  auto& r = report_for(self, path);
  r.settled = current;
  r.read_only = false;
  bool new_entry = r.has_entry;
  auto rp = self->make_response_promise<atom::ok>();
  // An append not synced is answered inside append(): held until the index
  // has heard of a new entry, so a client told of a turn's end lists it.
  auto inside = std::make_shared<bool>(true);
  auto held = std::make_shared<std::optional<caf::error>>();
  // A durable write's latency: its arrival here to its acknowledgement.
  auto figures = sync && self->state.telemetry ? std::shared_ptr<store_write_figures>(
                     self->state.telemetry, &self->state.telemetry->store_writes)
                                               : nullptr;
  auto arrived = std::chrono::steady_clock::now();
  self->state.writer->append(path, lines, sync, opens,
                             [rp, inside, held, figures, arrived](caf::error err) mutable {
                               if (figures) figures->answered(arrived, !err);
                               if (*inside) {
                                 *held = std::move(err);
                               } else if (err) {
                                 rp.deliver(std::move(err));
                               } else {
                                 rp.deliver(atom::ok::value);
                               }
                             });
  *inside = false;
  if (new_entry && !sync)
    report(self);
  else
    arm_report(self, false);  // a sync reports it sooner (flush)
  if (*held) {
    if (**held)
      rp.deliver(std::move(**held));
    else
      rp.deliver(atom::ok::value);
  }
  after_io(self);
  return rp;
}

caf::result<atom::ok> archive_rollout(io_ptr self, const std::string& from, const std::string& to) {
  if (auto err = self->state.writer->close(from)) return err;
  report(self);  // what it reported of `from` first: then the move
  journal_note(self, from);
  journal_note(self, to);
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
  report(self);
  journal_note(self, path);
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
  self->state.index = setup.index;
  if (!setup.journal_dir.empty())
    self->state.journal = std::make_unique<index_journal>(setup.journal_dir, setup.journal_stamp,
                                                          setup.shard);
  return {
      [self](atom::append, const std::string& path, const std::vector<std::string>& lines,
             bool sync, bool opens, bool current) -> caf::result<atom::ok> {
        return append_lines(self, path, lines, sync, opens, current);
      },
      [self](atom::put, index_entry& e, bool settled) {
        auto path = e.path;
        auto& r = report_for(self, path);
        r.read_only = false;
        r.has_entry = true;
        r.entry = std::move(e);
        r.settled = settled;
        if (settled) arm_report(self, true);  // no append follows to report it
      },
      [self](atom::put) {
        auto& st = self->state;
        st.report_queued = false;
        st.report_timer = false;
        if (!st.reports.empty()) report(self);
      },
      [self](atom::shutdown) {
        self->state.writer->flush();
        if (self->state.journal) self->state.journal->sync();
        report(self, true);
        return atom::ok::value;
      },
      [self](atom::load, const std::string& path) -> caf::result<stored_thread> {
        // Loaded now: retention leaves it alone.
        auto added = self->state.reports.count(path) == 0;
        auto& r = report_for(self, path);
        if (added) r.read_only = true;
        arm_report(self, false);
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
        report(self);
        journal_note(self, path);
        if (auto err = delete_rollout(path)) return err;
        return atom::ok::value;
      },
      [self](atom::revert, const std::string& path, const std::string& turn_id)
          -> caf::result<stored_thread> { return revert_rollout(self, path, turn_id); },
      [self](atom::flush) {
        self->state.flush_queued = false;
        // The journal first: a rollout synced is named by a synced journal.
        if (self->state.journal) self->state.journal->sync();
        // The index hears of this batch before any of it is acknowledged (the
        // sizes are those written; the sync changes none).
        report(self);
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
  /// A rebuild of a new index, a chunk of rollouts per message so that
  /// lists, reads and reports go on between them (from what is indexed so
  /// far) instead of waiting for the whole home to be read.
  struct rebuild {
    std::vector<std::string> roots;  // sessions, archived_sessions
    fs::recursive_directory_iterator walk;
    bool walking = false;
    /// A reconcile (the index exists): a rollout is read only when its row
    /// does not describe it, and rows whose rollout is gone are swept after
    /// the walk. Finds what another process (Codex sharing the home, a
    /// restore from backup) wrote or removed; after parley's own orderly
    /// stop it reads nothing.
    bool reconcile = false;
    bool swept = false;
    std::string sweep_after;  // the last id the sweep looked at
    /// Rows (by rowid) whose rollout the walk found as they describe it:
    /// the sweep need not stat those again (a bit each: 125 KB at 1M).
    std::vector<bool> described;
    size_t skipped = 0;  // rows the sweep passed over so, for its pacing
    size_t seen = 0;
    size_t read = 0;
    size_t removed = 0;
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point logged;
    /// `pending` asked meanwhile: answered once every rollout is read.
    std::vector<caf::typed_response_promise<std::vector<pending_entry>>> waiting;
  };
  std::unique_ptr<rebuild> rebuilding;
  /// Where stats read the catch-up's progress (null: nobody asks).
  std::shared_ptr<runtime_telemetry> telemetry;
  /// Retention: the age past which threads go (0: never), and every
  /// rollout this process has read or written (a thread that may be loaded,
  /// or run a turn, is never pruned under it).
  std::chrono::milliseconds prune_after{0};
  std::unordered_set<std::string> touched;
  /// The search table's fill (an index from before it), after the catch-up.
  struct search_fill {
    size_t filled = 0;
    size_t total = 0;
    bool merging = false;  // filled: its segments are merged, a step per message
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point logged;
  };
  std::unique_ptr<search_fill> filling;
};

using index_ptr = index_actor::stateful_pointer<index_state>;

/// Work a catch-up does per message: a list or a read waits for one chunk
/// at most (under a millisecond: 64 stats and point queries, or 8 rollouts
/// read). A rollout whose row describes it costs an eighth of one read.
constexpr size_t rebuild_chunk = 64;
constexpr size_t read_cost = 8;
constexpr size_t stat_cost = 1;

/// Rows the search table's fill takes per message (an FTS5 insert each):
/// a list waits for about a millisecond's worth at most.
constexpr size_t search_fill_chunk = 128;
/// Pages of the search table's segments merged per message once it is
/// filled (a few milliseconds' work).
constexpr int search_merge_pages = 16;

/// One chunk of the search table's fill; the next is a message behind
/// whatever came meanwhile. Searches scan until it is done.
void search_fill_step(index_ptr self) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  try {
    if (!st.filling) {
      st.filling = std::make_unique<index_state::search_fill>();
      st.filling->total = st.db->size();
      st.filling->started = st.filling->logged = now;
      PARLEY_INFO("thread_index event=search_filling threads={} (an index from before the search "
                  "table: it is filled behind the lists; searches scan until then)",
                  st.filling->total);
    }
    if (st.filling->merging) {
      if (st.db->merge_search(search_merge_pages)) {
        caf::anon_send(caf::actor_cast<index_actor>(self), atom::open::value);
        return;
      }
    } else {
      st.filling->filled += st.db->fill_search(search_fill_chunk);
    }
  } catch (const std::exception& e) {
    PARLEY_ERROR("thread_index event=search_fill_failed error={} (searches scan; the next start "
                 "goes on)",
                 e.what());
    st.filling.reset();
    return;
  }
  auto& f = *st.filling;
  if (!f.merging && st.db->search_ready()) {
    f.merging = true;
    PARLEY_INFO("thread_index event=search_merging threads={} ms={}", f.filled,
                std::chrono::duration_cast<std::chrono::milliseconds>(now - f.started).count());
    caf::anon_send(caf::actor_cast<index_actor>(self), atom::open::value);
    return;
  }
  if (!f.merging) {
    if (now - f.logged > std::chrono::seconds(5)) {
      f.logged = now;
      PARLEY_INFO("thread_index event=search_filling filled={} of={}", f.filled, f.total);
    }
    caf::anon_send(caf::actor_cast<index_actor>(self), atom::open::value);
    return;
  }
  PARLEY_INFO("thread_index event=search_filled threads={} ms={}", f.filled,
              std::chrono::duration_cast<std::chrono::milliseconds>(now - f.started).count());
  st.filling.reset();
}

void arm_retry(index_ptr self) {
  if (self->state.retry_armed) return;
  self->state.retry_armed = true;
  self->delayed_send(self, std::chrono::seconds(1), atom::retry::value);
}

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
  arm_retry(self);
}

/// An I/O actor's report, in one transaction; then its retired journal
/// goes. Refused: the entries wait (their files marked unknown, so a start
/// after a crash reads them again) and the journal stays for the next start.
void apply_report(index_ptr self, index_report& rep) {
  auto& st = self->state;
  std::vector<index_entry> entries;
  for (auto& f : rep.files) {
    st.touched.insert(f.path);
    if (!f.has_entry) continue;
    f.entry.file_size = f.settled ? f.size : -1;
    f.entry.file_mtime_ns = f.mtime_ns;
    f.entry.file_inode = f.inode;
    entries.push_back(std::move(f.entry));
  }
  try {
    st.db->batch([&] {
      for (auto& e : entries) st.db->upsert(e);
      for (auto& f : rep.files) {
        if (f.has_entry || f.read_only) continue;
        if (auto id = id_from_file_name(f.path))
          st.db->set_file(*id, f.path, f.settled ? f.size : -1, f.mtime_ns, f.inode);
      }
    });
  } catch (const std::exception& ex) {
    if (st.unwritten.empty())
      PARLEY_ERROR("thread_index event=upsert_failed error=\"{}\" (kept to write again)",
                   ex.what());
    for (auto& e : entries) {
      e.file_size = -1;
      st.unwritten[e.id] = std::move(e);
    }
    arm_retry(self);
    return;
  }
  for (auto& e : entries) st.unwritten.erase(e.id);
  if (!rep.retire.empty()) ::unlink(rep.retire.c_str());
}

/// Opens the index and catches up: all of the rollouts when the index is
/// new, else only those the journals of earlier processes name.
void open_index(index_ptr self, const std::string& home, const std::string& stamp) {
  auto& st = self->state;
  auto started = std::chrono::steady_clock::now();
  st.db = std::make_unique<thread_index>(index_path(home));
  auto journals = left_journals(journal_dir(home), stamp);
  size_t reread = 0;
  size_t journaled = 0;
  bool full = st.db->created();
  // Behind the requests, a chunk at a time (rebuild_step): a new index reads
  // every rollout; an existing one, once the journals are read again below,
  // stats every rollout and reads only those it does not describe.
  auto r = std::make_unique<index_state::rebuild>();
  r->roots = {home + "/archived_sessions", home + "/sessions"};
  r->started = r->logged = started;
  r->reconcile = !full;
  if (st.telemetry) {
    auto& p = st.telemetry->index_sync;
    p.phase = full ? index_sync_progress::rebuilding : index_sync_progress::reconciling;
    p.seen = p.read = p.removed = 0;
  }
  st.rebuilding = std::move(r);
  caf::anon_send(caf::actor_cast<index_actor>(self), atom::open::value);
  if (full) {
    for (auto& j : journals) ::unlink(j.c_str());  // a rebuild reads every rollout anyway
    PARLEY_INFO("thread_index event=rebuilding (a new index: every rollout is read, behind "
                "the lists)");
    return;
  } else {
    std::vector<std::string> paths;
    for (auto& j : journals)
      for (auto& p : read_journal(j)) paths.push_back(std::move(p));
    journaled = paths.size();
    reread = sync_journaled(*st.db, paths);
  }
  // Committed: what they named is in the index now.
  for (auto& j : journals) ::unlink(j.c_str());
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - started)
                .count();
  auto threads = st.db->size();
  PARLEY_INFO("thread_index event=synced threads={} reread={} journaled={} full={} ms={}",
              threads, reread, journaled, full, ms);
}

/// Whether `path`'s row says what the file now holds: nothing to read. The
/// row's file columns alone are read (not its preview and the rest), and
/// its rowid marked in `described`.
bool row_describes(thread_index& db, const std::string& path, std::vector<bool>& described) {
  auto id = id_from_file_name(path);
  struct stat sb {};
  if (!id || ::stat(path.c_str(), &sb) != 0) return false;
  auto row = db.file_of(*id);
  if (!row) return false;
  index_entry e;
  e.path = std::move(row->path);
  e.file_size = row->file_size;
  e.file_mtime_ns = row->file_mtime_ns;
  e.file_inode = row->file_inode;
  if (!entry_describes(e, path, sb)) return false;
  if (row->rowid >= 0) {
    auto at = static_cast<size_t>(row->rowid);
    if (at >= described.size()) described.resize(std::max(at + 1, described.size() * 2));
    described[at] = true;
  }
  return true;
}

/// Part of a reconcile's sweep: rows whose rollout is gone are removed. A
/// row whose file this process moved (archive) comes back with the move's
/// report, which carries the whole entry.
void sweep_some(thread_index& db, index_state::rebuild& r, size_t& done) {
  while (done < rebuild_chunk) {
    auto page = db.paths_after(r.sweep_after, 256);
    if (page.empty()) {
      r.swept = true;
      return;
    }
    for (auto& row : page) {
      r.sweep_after = row.id;
      // Found by the walk as it describes it: no second stat (a sixteenth
      // of one in the chunk's pacing, for the page reads).
      auto at = static_cast<size_t>(row.rowid);
      if (row.rowid >= 0 && at < r.described.size() && r.described[at]) {
        if (++r.skipped % 16 == 0) done += stat_cost;
        continue;
      }
      done += stat_cost;
      struct stat sb {};
      if (::stat(row.path.c_str(), &sb) == 0 || errno != ENOENT) continue;
      db.remove(row.id);
      ++r.removed;
    }
  }
}

/// One chunk of a rebuild or reconcile; the next is a message behind
/// whatever came meanwhile.
void rebuild_step(index_ptr self) {
  auto& st = self->state;
  auto& r = *st.rebuilding;
  size_t done = 0;
  try {
    st.db->batch([&] {
      while (done < rebuild_chunk) {
        if (!r.walking) {
          if (r.roots.empty()) {
            if (r.reconcile && !r.swept) sweep_some(*st.db, r, done);
            return;
          }
          std::error_code ec;
          r.walk = fs::recursive_directory_iterator(
              r.roots.back(), fs::directory_options::skip_permission_denied, ec);
          r.roots.pop_back();
          r.walking = !ec;
          continue;
        }
        if (r.walk == fs::recursive_directory_iterator()) {
          r.walking = false;
          continue;
        }
        std::error_code ec;
        auto path = r.walk->path().string();
        bool file = r.walk->is_regular_file(ec) && id_from_file_name(path);
        r.walk.increment(ec);
        if (ec) r.walking = false;
        if (!file) continue;
        ++r.seen;
        if (r.reconcile && row_describes(*st.db, path, r.described)) {
          done += stat_cost;
          continue;
        }
        done += read_cost;
        if (reindex_rollout(*st.db, path)) ++r.read;
      }
    });
  } catch (const std::exception& e) {
    PARLEY_ERROR("thread_index event=rebuild_failed error={} (`parley store reindex` rebuilds it)",
                 e.what());
    for (auto& rp : r.waiting) rp.deliver(make_error(errc::internal, e.what()));
    st.rebuilding.reset();
    if (st.telemetry) st.telemetry->index_sync.phase = index_sync_progress::ready;
    return;
  }
  if (st.telemetry) {
    auto& p = st.telemetry->index_sync;
    p.seen = static_cast<int64_t>(r.seen);
    p.read = static_cast<int64_t>(r.read);
    p.removed = static_cast<int64_t>(r.removed);
  }
  auto now = std::chrono::steady_clock::now();
  if (r.walking || !r.roots.empty() || (r.reconcile && !r.swept)) {
    if (now - r.logged > std::chrono::seconds(5)) {
      r.logged = now;
      PARLEY_INFO("thread_index event={} seen={} read={} removed={}",
                  r.reconcile ? "reconciling" : "rebuilding", r.seen, r.read, r.removed);
    }
    caf::anon_send(caf::actor_cast<index_actor>(self), atom::open::value);
    return;
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - r.started).count();
  if (r.reconcile)
    PARLEY_INFO("thread_index event=reconciled threads={} seen={} reread={} removed={} ms={}",
                st.db->size(), r.seen, r.read, r.removed, ms);
  else
    PARLEY_INFO("thread_index event=synced threads={} reread={} journaled=0 full=true ms={}",
                st.db->size(), r.read, ms);
  if (st.telemetry) st.telemetry->index_sync.phase = index_sync_progress::ready;
  auto waiting = std::move(r.waiting);
  st.rebuilding.reset();
  if (!st.db->search_ready()) caf::anon_send(caf::actor_cast<index_actor>(self), atom::open::value);
  for (auto& rp : waiting) {
    try {
      rp.deliver(st.db->pending());
    } catch (const std::exception& e) {
      rp.deliver(make_error(errc::internal, e.what()));
    }
  }
}

/// Threads retention removes per message (each a file and its folder
/// synced): a list waits for one round at most.
constexpr size_t prune_chunk = 64;

/// One round of retention: up to prune_chunk threads older than the cutoff
/// that this process has not touched and that have no work pending; the
/// next round at once while more are due, else in an hour.
void prune_round(index_ptr self) {
  auto& st = self->state;
  if (!st.db || st.prune_after.count() <= 0) return;
  if (st.rebuilding) {  // rows are still coming: after it
    self->delayed_send(self, std::chrono::seconds(10), atom::timeout::value);
    return;
  }
  auto cutoff = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch() - st.prune_after)
                    .count();
  size_t removed = 0;
  bool more = false;
  try {
    std::vector<std::string> gone;
    for (auto& e : st.db->updated_before(cutoff, false, true, prune_chunk + 1 + st.touched.size())) {
      if (e.pending != 0 || st.touched.count(e.path) > 0) continue;
      if (gone.size() == prune_chunk) {
        more = true;
        break;
      }
      if (auto err = delete_rollout(e.path)) {
        PARLEY_WARN("thread_index event=prune_failed thread={} path={} error={}", e.id, e.path,
                    message_of(err));
        continue;
      }
      gone.push_back(e.id);
    }
    st.db->batch([&] {
      for (auto& id : gone) st.db->remove(id);
    });
    removed = gone.size();
  } catch (const std::exception& ex) {
    PARLEY_WARN("thread_index event=prune_failed error={}", ex.what());
  }
  if (removed > 0)
    PARLEY_INFO("thread_index event=pruned threads={} older_than_s={}", removed,
                std::chrono::duration_cast<std::chrono::seconds>(st.prune_after).count());
  if (more)
    caf::anon_send(caf::actor_cast<index_actor>(self), atom::timeout::value);
  else
    self->delayed_send(self, std::chrono::seconds(3600), atom::timeout::value);
}

index_actor::behavior_type index_owner(index_ptr self, std::string home, std::string stamp,
                                       std::chrono::milliseconds prune_after,
                                       std::shared_ptr<runtime_telemetry> telemetry) {
  install_default_handlers(self, "thread_index");
  self->state.prune_after = prune_after;
  self->state.telemetry = std::move(telemetry);
  if (prune_after.count() > 0) caf::anon_send(caf::actor_cast<index_actor>(self), atom::timeout::value);
  try {
    open_index(self, home, stamp);
  } catch (const std::exception& e) {
    PARLEY_ERROR("thread_index event=open_failed error={}", e.what());
    if (self->state.telemetry) self->state.telemetry->index_sync.phase = index_sync_progress::ready;
  }
  return {
      [self](atom::put, index_report& rep) {
        if (!self->state.db) return;
        apply_report(self, rep);
      },
      [](atom::flush) { return atom::ok::value; },  // every report before it is committed
      [self](atom::open) {
        if (self->state.rebuilding)
          rebuild_step(self);
        else if (self->state.db && (!self->state.db->search_ready() || self->state.filling))
          search_fill_step(self);
      },
      [self](atom::timeout) { prune_round(self); },
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
        // The work to go on with must be whole: after a rebuild. A reconcile
        // finds only what other processes wrote, which holds none of parley's.
        if (self->state.rebuilding && !self->state.rebuilding->reconcile) {
          auto rp = self->make_response_promise<std::vector<pending_entry>>();
          self->state.rebuilding->waiting.push_back(rp);
          return rp;
        }
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

index_actor spawn_index_owner(caf::local_actor* owner, const std::string& home,
                              const std::string& stamp, std::chrono::milliseconds prune_after,
                              std::shared_ptr<runtime_telemetry> telemetry) {
  return owner->spawn<caf::detached + caf::linked>(index_owner, home, stamp, prune_after,
                                                   std::move(telemetry));
}

}  // namespace parley::store
