#include "actors/store/rollout_writer.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "actors/core/errors.hpp"
#include "actors/store/rollout_file.hpp"

namespace parley::store {

namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  size_t n = 0;
  for (auto& l : lines) n += l.size() + 1;
  std::string data;
  data.reserve(n);
  for (auto& l : lines) {
    data += l;
    data += '\n';
  }
  return data;
}

caf::error io_error(const char* what, const std::string& path, int err) {
  return make_error(errc::internal, std::string{what} + " " + path + ": " + reason_of(err));
}

}  // namespace

std::string reason_of(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

rollout_writer::rollout_writer(std::shared_ptr<file_ops> ops)
    : rollout_writer(std::move(ops), limits{}) {}

rollout_writer::rollout_writer(std::shared_ptr<file_ops> ops, limits lim)
    : ops_(std::move(ops)), limits_(lim) {}

rollout_writer::~rollout_writer() {
  for (auto& [path, f] : files_)
    if (f.fd >= 0) ops_->close(f.fd);
}

void rollout_writer::append(const std::string& path, const std::vector<std::string>& lines,
                            bool sync, bool opens, append_done done) {
  auto& f = files_[path];
  if (f.broken) {
    if (!opens) {
      done(make_error(errc::internal, "not stored: an earlier record of " + path
                                          + " was given up (" + fault_ + ")"));
      return;
    }
    f.broken = false;  // a new turn (or thread) starts after the last good record
  }
  chunk c{join_lines(lines), std::move(done)};
  if (!f.waiting.empty()) return wait(path, f, std::move(c), caf::error{});
  if (auto err = open(path, f)) return wait(path, f, std::move(c), err);
  if (auto err = write_chunk(path, f, c.data)) return wait(path, f, std::move(c), err);
  f.unsynced_bytes += c.data.size();
  if (sync) {
    f.unsynced.push_back(std::move(c));
    if (!f.dirty) {
      f.dirty = true;
      dirty_.push_back(path);
    }
    return;
  }
  auto answer = std::move(c.done);
  c.done = nullptr;
  f.unsynced.push_back(std::move(c));  // kept to write again if the next sync fails
  if (f.unsynced_bytes > limits_.unsynced_bytes) sync_file(path, f);
  answer(caf::error{});
}

void rollout_writer::flush() {
  auto paths = std::move(dirty_);
  dirty_.clear();
  for (auto& path : paths)
    if (auto i = files_.find(path); i != files_.end()) {
      i->second.dirty = false;
      sync_file(path, i->second);
    }
}

bool rollout_writer::retry() {
  if (cuts_pending_ != 0)
    for (auto& [path, f] : files_)
      if (f.waiting.empty()) try_cut(path, f);
  if (waiting_files_ == 0) return (!refusing_ || probe()) && cuts_pending_ == 0;
  std::vector<std::string> paths;
  for (auto& [path, f] : files_)
    if (!f.waiting.empty()) paths.push_back(path);
  for (auto& path : paths) {
    auto i = files_.find(path);
    if (i != files_.end() && !drain(path, i->second)) return false;  // the disk still refuses
  }
  return !faulted();
}

bool rollout_writer::settled(const std::string& path) const {
  auto i = files_.find(path);
  return i == files_.end() || (i->second.waiting.empty() && i->second.cut_to < 0);
}

caf::error rollout_writer::close(const std::string& path) {
  auto i = files_.find(path);
  if (i == files_.end()) return caf::error{};
  auto& f = i->second;
  if (!f.waiting.empty())
    return make_error(errc::internal, "records of " + path + " still wait for the disk ("
                                          + fault_ + ")");
  if (!f.unsynced.empty() && !sync_file(path, f))
    return make_error(errc::internal, "cannot sync " + path + ": " + fault_);
  try_cut(path, f);
  if (f.cut_to >= 0) return make_error(errc::internal, fault_);
  close_fd(f);
  files_.erase(i);
  return caf::error{};
}

// -- a file's steps -------------------------------------------------------------

caf::error rollout_writer::open(const std::string& path, file& f) {
  if (f.fd >= 0) {
    touch(path, f);
    return caf::error{};
  }
  auto dir = std::filesystem::path(path).parent_path().string();
  if (ops_->make_dirs(dir.c_str()) != 0) return io_error("cannot create", dir, errno);
  int fd = ops_->open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot open", path, errno);
  caf::error err;
  if (f.cut_to >= 0) {
    // A sync failed: what followed its last good length is written again.
    if (ops_->ftruncate(fd, f.cut_to) != 0) err = io_error("cannot truncate", path, errno);
  } else if (!f.repaired) {
    err = repair_torn_tail(*ops_, fd, path);
  }
  off_t size = 0;
  if (!err && ops_->fsize(fd, &size) != 0) err = io_error("cannot stat", path, errno);
  if (err) {
    ops_->close(fd);
    return err;
  }
  clear_cut(f);
  f.repaired = true;
  f.fd = fd;
  // Written but not yet synced through an earlier descriptor: still
  // unsynced (the next sync covers it; a failed one rewrites it).
  if (f.unsynced.empty()) f.synced = size;
  f.end = size;
  if (open_count_ >= limits_.max_open_files && !lru_.empty()) {
    auto victim = lru_.back();
    if (auto v = files_.find(victim); v != files_.end()) {
      // Appends that wait for a sync get it now; written ones that need
      // none do not (they stay kept until the file's next sync).
      bool awaited = false;
      for (auto& c : v->second.unsynced) awaited = awaited || static_cast<bool>(c.done);
      if (awaited) sync_file(victim, v->second);
      close_fd(v->second);
      forget_if_idle(victim);
    }
  }
  ++open_count_;
  touch(path, f);
  return caf::error{};
}

caf::error rollout_writer::write_chunk(const std::string& path, file& f, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    auto n = ops_->write(f.fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    int err = n < 0 ? errno : ENOSPC;
    // No half record stays for the next one to glue onto; if even the cut
    // fails, it is made before the file takes anything again.
    if (done > 0 && ops_->ftruncate(f.fd, f.end) != 0) {
      set_cut(f, f.end);
      close_fd(f);
    }
    return io_error("cannot write", path, err);
  }
  f.end += static_cast<off_t>(data.size());
  refusing_ = false;
  return caf::error{};
}

bool rollout_writer::sync_file(const std::string& path, file& f) {
  if (f.unsynced.empty()) return true;
  if (f.fd < 0 && f.cut_to < 0) (void)open(path, f);  // closed since (evicted): reopened
  if (f.fd >= 0 && ops_->fdatasync(f.fd) == 0) {
    f.synced = f.end;
    auto answered = std::move(f.unsynced);
    f.unsynced.clear();
    f.unsynced_bytes = 0;
    for (auto& c : answered)
      if (c.done) c.done(caf::error{});
    return true;
  }
  // What the kernel held may be gone (it need not report twice): cut the file
  // back to its last synced length and write everything after it again.
  refused(path, "cannot sync " + path + ": "
                    + (f.fd >= 0 ? reason_of(errno) : std::string{"the file was closed"}));
  set_cut(f, f.cut_to >= 0 ? std::min(f.cut_to, f.synced) : f.synced);
  close_fd(f);
  bool was_waiting = !f.waiting.empty();
  for (auto i = f.unsynced.rbegin(); i != f.unsynced.rend(); ++i) {
    waiting_bytes_ += i->data.size();
    f.waiting.push_front(std::move(*i));
  }
  f.unsynced.clear();
  f.unsynced_bytes = 0;
  if (!was_waiting && !f.waiting.empty()) ++waiting_files_;
  if (waiting_bytes_ > limits_.backlog_bytes) give_up(path, f);
  return false;
}

bool rollout_writer::drain(const std::string& path, file& f) {
  if (auto err = open(path, f)) {
    refused(path, message_of(err));
    return false;
  }
  while (!f.waiting.empty()) {
    auto& c = f.waiting.front();
    if (auto err = write_chunk(path, f, c.data)) {
      refused(path, message_of(err));
      return false;
    }
    waiting_bytes_ -= c.data.size();
    f.unsynced_bytes += c.data.size();
    f.unsynced.push_back(std::move(c));
    f.waiting.pop_front();
  }
  --waiting_files_;
  return sync_file(path, f);  // every record that waited is answered once synced
}

void rollout_writer::wait(const std::string& path, file& f, chunk c, const caf::error& why) {
  if (why) refused(path, message_of(why));
  if (f.waiting.empty()) ++waiting_files_;
  waiting_bytes_ += c.data.size();
  f.waiting.push_back(std::move(c));
  if (waiting_bytes_ > limits_.backlog_bytes) give_up(path, f);
}

void rollout_writer::give_up(const std::string& path, file& f) {
  auto err = make_error(errc::internal,
                        "not stored: " + std::to_string(waiting_bytes_)
                            + " bytes already wait for the disk (" + fault_ + "); " + path
                            + " takes no more records until its next turn");
  auto given = std::move(f.waiting);
  f.waiting.clear();
  --waiting_files_;
  f.broken = true;
  // Records a failed sync left in the file are given up too: cut them off
  // now (or, if the disk refuses even that, on a retry, before anything else).
  try_cut(path, f);
  for (auto& c : given) {
    waiting_bytes_ -= c.data.size();
    if (c.done) c.done(err);
  }
}

void rollout_writer::set_cut(file& f, off_t at) {
  if (f.cut_to < 0) ++cuts_pending_;
  f.cut_to = at;
}

void rollout_writer::clear_cut(file& f) {
  if (f.cut_to >= 0) --cuts_pending_;
  f.cut_to = -1;
}

void rollout_writer::try_cut(const std::string& path, file& f) {
  if (f.cut_to < 0 || f.fd >= 0) return;
  int fd = ops_->open(path.c_str(), O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return refused(path, "cannot open " + path + ": " + reason_of(errno));
  bool cut = ops_->ftruncate(fd, f.cut_to) == 0 && ops_->fdatasync(fd) == 0;
  int err = errno;
  ops_->close(fd);
  if (!cut) return refused(path, "cannot truncate " + path + ": " + reason_of(err));
  f.synced = f.end = f.cut_to;
  clear_cut(f);
}

void rollout_writer::refused(const std::string& path, std::string why) {
  fault_ = std::move(why);
  refusing_ = true;
  refused_dir_ = std::filesystem::path(path).parent_path().string();
}

bool rollout_writer::probe() {
  // Nothing waits (what waited was given up), so no record tells whether the
  // disk takes writes again: a page written and synced beside the last file
  // it refused does.
  auto path = refused_dir_ + "/.parley-probe";
  std::string page(4096, '\n');
  int fd = ops_->open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && ops_->write(fd, page.data(), page.size()) == static_cast<ssize_t>(page.size())
            && ops_->fdatasync(fd) == 0;
  int err = errno;
  if (fd >= 0) ops_->close(fd);
  ops_->unlink(path.c_str());
  if (!ok) {
    fault_ = "cannot write " + path + ": " + reason_of(err);
    return false;
  }
  refusing_ = false;
  return true;
}

void rollout_writer::close_fd(file& f) {
  if (f.fd < 0) return;
  ops_->close(f.fd);
  f.fd = -1;
  --open_count_;
  if (f.in_lru) {
    lru_.erase(f.lru);
    f.in_lru = false;
  }
}

void rollout_writer::touch(const std::string& path, file& f) {
  if (f.in_lru) lru_.erase(f.lru);
  lru_.push_front(path);
  f.lru = lru_.begin();
  f.in_lru = true;
}

void rollout_writer::forget_if_idle(const std::string& path) {
  auto i = files_.find(path);
  if (i == files_.end()) return;
  auto& f = i->second;
  if (f.fd < 0 && f.waiting.empty() && f.unsynced.empty() && !f.broken && f.cut_to < 0)
    files_.erase(i);
}

}  // namespace parley::store
