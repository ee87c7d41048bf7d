#include "actors/model/http/io_loop.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <stdexcept>
#include <string>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace parley::http {

namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw std::runtime_error("http client: curl_global_init failed");
  });
}

outcome aborted(std::string why) { return {outcome::kind::aborted, std::move(why)}; }

int curl_flags_of(uint32_t events) {
  int flags = 0;
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) != 0) flags |= CURL_CSELECT_IN;
  if ((events & EPOLLOUT) != 0) flags |= CURL_CSELECT_OUT;
  if ((events & EPOLLERR) != 0) flags |= CURL_CSELECT_ERR;
  return flags;
}

}  // namespace

client::io_loop::io_loop() {
  init_curl_once();
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  multi_ = curl_multi_init();
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  if (epoll_fd_ < 0 || wake_fd_ < 0 || multi_ == nullptr
      || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
    if (multi_ != nullptr) curl_multi_cleanup(multi_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    throw std::runtime_error("http client: epoll, eventfd or curl_multi_init failed");
  }
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &io_loop::on_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &io_loop::on_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  // Many streams to one host share an HTTP/2 connection where it offers one.
  curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  thread_ = std::thread([this] { run(); });
}

client::io_loop::~io_loop() {
  stop();
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

bool client::io_loop::post(command c) {
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (stopping_) return false;
    was_empty = commands_.empty();
    commands_.push_back(std::move(c));
  }
  // A non-empty queue has its wake-up on the way already.
  if (was_empty) wake();
  return true;
}

bool client::io_loop::post_start(std::unique_ptr<transfer> t) {
  return post({std::move(t), 0, command::kind::start});
}

void client::io_loop::post_abort(request_id id) { post({nullptr, id, command::kind::abort}); }

void client::io_loop::post_pause(request_id id, bool hold) {
  post({nullptr, id, hold ? command::kind::pause : command::kind::resume});
}

void client::io_loop::post_flow(request_id id) { post({nullptr, id, command::kind::flow}); }

void client::io_loop::stop() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
}

void client::io_loop::wake() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void client::io_loop::run() {
  while (apply_commands()) {
    release_held();
    wait_and_dispatch();
    collect_done();
  }
  held_.clear();
  for (auto& [id, t] : transfers_) {
    curl_multi_remove_handle(multi_, t->easy());
    t->finish(aborted("aborted: the HTTP client shut down"));
  }
  live_ -= transfers_.size();
  transfers_.clear();
  for (auto& [id, t] : waiting_) t->finish(aborted("aborted: the HTTP client shut down"));
  queued_ -= waiting_.size();
  waiting_.clear();
  held_waiting_.clear();
  // Closes the cached connections, here: no other thread touches a socket.
  curl_multi_cleanup(multi_);
  multi_ = nullptr;
}

// Applies the queued commands in order; false once stopping.
bool client::io_loop::apply_commands() {
  std::deque<command> batch;
  bool stopping = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    batch.swap(commands_);
    stopping = stopping_;
  }
  for (auto& c : batch) {
    switch (c.what) {
      case command::kind::start:
        add(std::move(c.start));
        break;
      case command::kind::abort:
        abort_one(c.id);
        break;
      case command::kind::pause:
      case command::kind::resume:
        pause_one(c.id, c.what == command::kind::pause);
        break;
      case command::kind::flow:
        flow_one(c.id);
        break;
    }
  }
  return !stopping;
}

void client::io_loop::add(std::unique_ptr<transfer> t) {
  if (t->easy() == nullptr) {
    t->finish({outcome::kind::failed, t->setup_error()});
    return;
  }
  const auto& req = t->req();
  if (!req.gate.empty()
      && !gate_.arrive(req.gate, req.gate_limit, {req.tenant, req.thread}, t->id())) {
    ++queued_;
    auto id = t->id();
    if (t->paused()) count_held_waiting(*t, true);
    waiting_.emplace(id, std::move(t));
    hold_check_due_ = true;  // a held stream past its grace may make room
    return;
  }
  launch(std::move(t));
}

// Hands `t` to curl (it holds its gate's slot, if it has a gate).
void client::io_loop::launch(std::unique_ptr<transfer> t) {
  auto rc = curl_multi_add_handle(multi_, t->easy());
  if (rc != CURLM_OK) {
    t->finish({outcome::kind::failed, curl_multi_strerror(rc)});
    release(t->id());
    return;
  }
  t->admitted();
  ++live_;
  // Held while it waited for its gate: it starts held. Not curl_easy_pause
  // here: before its connection is up curl refuses it (and forgets it);
  // the write callback pauses the transfer at its first piece instead.
  note_hold(*t);
  auto id = t->id();
  transfers_.emplace(id, std::move(t));
}

// Backpressure: curl stops reading the transfer's socket (and tells us to
// stop polling it for input); CURLPAUSE_CONT hands on what it had buffered
// and reads again. Called on this thread only, as curl requires.
void client::io_loop::pause_one(request_id id, bool hold) {
  if (auto w = waiting_.find(id); w != waiting_.end()) {
    if (w->second->paused() == hold) return;
    w->second->set_paused(hold);
    count_held_waiting(*w->second, hold);
    if (!hold) hold_check_due_ = true;  // a held stream may make room for it now
    return;
  }
  auto i = transfers_.find(id);
  if (i == transfers_.end() || i->second->paused() == hold) return;
  auto& t = *i->second;
  t.set_paused(hold);
  note_hold(t);
  if (hold) {
    // Refused while the transfer has no connection yet (curl 7.88 answers
    // CURLE_BAD_FUNCTION_ARGUMENT): then the write callback pauses it at
    // its first piece, seeing paused().
    curl_easy_pause(t.easy(), CURLPAUSE_RECV);
    return;
  }
  // A transfer its sink paused stays paused until the sink has room
  // (flow_one continues it then).
  if (!t.flow_paused()) curl_easy_pause(t.easy(), CURLPAUSE_CONT);
}

// The sink has room again: read on, unless held. CONT hands the kept piece
// to the sink at once (which may pause it again).
void client::io_loop::flow_one(request_id id) {
  auto i = transfers_.find(id);
  if (i == transfers_.end() || !i->second->flow_paused()) return;
  auto& t = *i->second;
  t.clear_flow_paused();
  if (!t.paused()) curl_easy_pause(t.easy(), CURLPAUSE_CONT);
}

// Request `id` no longer holds (or waits for) its gate: the next waiting ones start.
void client::io_loop::release(request_id id) {
  for (auto next : gate_.leave(id)) {
    auto w = waiting_.find(next);
    if (w == waiting_.end()) continue;
    auto t = std::move(w->second);
    waiting_.erase(w);
    --queued_;
    if (t->paused()) count_held_waiting(*t, false);
    launch(std::move(t));
  }
}

void client::io_loop::abort_one(request_id id) {
  if (auto w = waiting_.find(id); w != waiting_.end()) {
    auto t = std::move(w->second);
    waiting_.erase(w);
    --queued_;
    if (t->paused()) count_held_waiting(*t, false);
    release(id);
    t->finish(aborted("aborted"));
    return;
  }
  auto i = transfers_.find(id);
  if (i == transfers_.end()) return;  // done already, or never started
  auto t = std::move(i->second);
  transfers_.erase(i);
  held_.erase(id);
  --live_;
  // With a response half read, curl closes the connection (HTTP/2: resets the stream).
  curl_multi_remove_handle(multi_, t->easy());
  t->finish(aborted("aborted"));
  release(id);
}

// A running transfer's hold began or ended: it may give its slot away once
// held for its request's hold_release_ms (counted from the hold, or from its
// start for one that starts held).
void client::io_loop::note_hold(const transfer& t) {
  const auto& req = t.req();
  if (!t.paused() || req.gate.empty() || req.hold_release_ms <= 0) {
    held_.erase(t.id());
    return;
  }
  auto due = clock_type::now() + std::chrono::milliseconds(req.hold_release_ms);
  held_[t.id()] = due;
  if (!next_hold_check_ || due < *next_hold_check_) next_hold_check_ = due;
}

// Cuts the streams held past their grace whose gate has a request waiting
// that is not held itself, the longest held first, one for each such
// request: each cut's slot goes to a waiting request at once (release). A
// held stream with nobody waiting keeps its slot: cutting it would waste the
// model's work. (The gate's round-robin may hand the slot to a held waiting
// request before an unheld one; that one is then cut in its turn once its
// grace is over, so an unheld request waits a grace longer at most per
// held one ahead of it.)
void client::io_loop::release_held() {
  if (held_.empty()) {
    next_hold_check_.reset();
    hold_check_due_ = false;
    return;
  }
  auto now = clock_type::now();
  if (!hold_check_due_ && (!next_hold_check_ || now < *next_hold_check_)) return;
  hold_check_due_ = false;
  next_hold_check_.reset();
  std::vector<std::pair<clock_type::time_point, request_id>> due;
  for (const auto& [id, when] : held_) {
    if (when <= now)
      due.emplace_back(when, id);
    else if (!next_hold_check_ || when < *next_hold_check_)
      next_hold_check_ = when;
  }
  // Due ones whose gate has nobody waiting are looked at again when a
  // request starts waiting (hold_check_due_), not before.
  std::sort(due.begin(), due.end());
  for (const auto& [when, id] : due) {
    auto i = transfers_.find(id);
    if (i == transfers_.end()) continue;
    if (unheld_waiting(i->second->req().gate) == 0) continue;
    cut(id);
  }
}

void client::io_loop::count_held_waiting(const transfer& t, bool more) {
  const auto& gate = t.req().gate;
  if (more) {
    ++held_waiting_[gate];
    return;
  }
  auto i = held_waiting_.find(gate);
  if (i != held_waiting_.end() && --i->second == 0) held_waiting_.erase(i);
}

std::size_t client::io_loop::unheld_waiting(const std::string& gate) const {
  auto i = held_waiting_.find(gate);
  auto held = i == held_waiting_.end() ? 0 : i->second;
  auto all = gate_.waiting(gate);
  return all > held ? all - held : 0;
}

// Ends a held transfer as released (its sink asks again later) and gives
// its slot to the next waiting request.
void client::io_loop::cut(request_id id) {
  auto i = transfers_.find(id);
  if (i == transfers_.end()) return;
  auto t = std::move(i->second);
  transfers_.erase(i);
  held_.erase(id);
  --live_;
  curl_multi_remove_handle(multi_, t->easy());
  t->finish({outcome::kind::released,
             "released: held for " + std::to_string(t->req().hold_release_ms)
                 + " ms or more while another request waited for its slot"});
  release(id);
}

void client::io_loop::wait_and_dispatch() {
  int timeout_ms = -1;
  auto wake_at = timer_;
  if (next_hold_check_ && (!wake_at || *next_hold_check_ < *wake_at)) wake_at = next_hold_check_;
  if (wake_at) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake_at - clock_type::now()).count();
    timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
  }
  epoll_event events[256];
  int n = ::epoll_wait(epoll_fd_, events, 256, timeout_ms);
  int running = 0;
  for (int k = 0; k < n; ++k) {
    if (events[k].data.fd == wake_fd_) {
      uint64_t count = 0;
      [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof count);
      continue;
    }
    curl_multi_socket_action(multi_, events[k].data.fd, curl_flags_of(events[k].events), &running);
  }
  if (timer_ && clock_type::now() >= *timer_) {
    timer_.reset();  // curl sets the next one from inside the action
    curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
  }
}

void client::io_loop::collect_done() {
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    CURL* easy = message->easy_handle;
    CURLcode code = message->data.result;
    transfer* raw = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &raw);
    curl_multi_remove_handle(multi_, easy);  // `message` is gone from here on
    auto i = transfers_.find(raw->id());
    if (i == transfers_.end()) continue;
    auto t = std::move(i->second);
    transfers_.erase(i);
    held_.erase(t->id());
    --live_;
    t->finish(t->outcome_of(code));
    release(t->id());
  }
}

int client::io_loop::on_socket(CURL*, curl_socket_t fd, int what, void* self, void*) {
  auto epoll_fd = static_cast<io_loop*>(self)->epoll_fd_;
  if (what == CURL_POLL_REMOVE) {
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    return 0;
  }
  epoll_event ev{};
  if ((what & CURL_POLL_IN) != 0) ev.events |= EPOLLIN;
  if ((what & CURL_POLL_OUT) != 0) ev.events |= EPOLLOUT;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  return 0;
}

int client::io_loop::on_timer(CURLM*, long timeout_ms, void* self) {
  auto& loop = *static_cast<io_loop*>(self);
  if (timeout_ms < 0)
    loop.timer_.reset();
  else
    loop.timer_ = clock_type::now() + std::chrono::milliseconds(timeout_ms);
  return 0;
}

}  // namespace parley::http
