#pragma once
// The client's I/O thread: epoll over curl's sockets and an eventfd, curl's
// one timer, and the command queue that start() and abort() fill. Private to
// client.cpp. Everything below "I/O thread only" is touched by that thread
// alone, including every socket and the curl multi handle.

#include <atomic>
#include <chrono>
#include <curl/curl.h>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "actors/model/http/client.hpp"
#include "actors/model/http/fair_gate.hpp"
#include "actors/model/http/transfer.hpp"

namespace parley::http {

class client::io_loop {
 public:
  io_loop();
  ~io_loop();  // stop()
  io_loop(const io_loop&) = delete;
  io_loop& operator=(const io_loop&) = delete;

  /// Queues a started transfer; false once stopping (the caller reports it).
  bool post_start(std::unique_ptr<transfer> t);
  void post_abort(request_id id);
  void post_pause(request_id id, bool hold);
  void post_flow(request_id id);
  /// Aborts everything and joins the thread.
  void stop();

  request_id next_id() { return next_id_.fetch_add(1); }
  std::size_t live() const { return live_.load(); }
  std::size_t queued() const { return queued_.load(); }

 private:
  using clock_type = std::chrono::steady_clock;
  struct command {
    enum class kind { start, abort, pause, resume, flow };
    std::unique_ptr<transfer> start;  // kind::start
    request_id id = 0;                // the others
    kind what = kind::start;
  };

  static int on_socket(CURL* easy, curl_socket_t fd, int what, void* self, void* socket_data);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);

  bool post(command c);
  void wake();
  void run();
  bool apply_commands();
  void add(std::unique_ptr<transfer> t);
  void launch(std::unique_ptr<transfer> t);
  void release(request_id id);
  void abort_one(request_id id);
  void pause_one(request_id id, bool hold);
  void flow_one(request_id id);
  void note_hold(const transfer& t);
  void count_held_waiting(const transfer& t, bool more);
  std::size_t unheld_waiting(const std::string& gate) const;
  void release_held();
  void cut(request_id id);
  void wait_and_dispatch();
  void collect_done();
  void end(std::unique_ptr<transfer> t, const outcome& result);

  std::mutex mtx_;
  std::deque<command> commands_;  // guarded by mtx_
  bool stopping_ = false;         // guarded by mtx_
  std::atomic<request_id> next_id_{1};
  std::atomic<std::size_t> live_{0};
  std::atomic<std::size_t> queued_{0};
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  // I/O thread only (and the constructor and destructor, while it does not run):
  CURLM* multi_ = nullptr;
  std::optional<clock_type::time_point> timer_;  // when curl wants its timeout action
  std::unordered_map<request_id, std::unique_ptr<transfer>> transfers_;
  // Requests past their gate's cap, not yet started (see fair_gate.hpp).
  fair_gate gate_;
  std::unordered_map<request_id, std::unique_ptr<transfer>> waiting_;
  // Running transfers held by client::pause that may give their slot away
  // (request::hold_release_ms), and when they may: a held stream keeps the
  // model server's slot too, so one slow client would starve the others.
  // Looked through when the earliest of them comes due (next_hold_check_) or
  // a request starts waiting for a gate (hold_check_due_), not on every wake.
  std::unordered_map<request_id, clock_type::time_point> held_;
  // Requests waiting for each gate while held: a held stream is not cut for
  // them (one would only be held in its place).
  std::unordered_map<std::string, std::size_t> held_waiting_;
  std::optional<clock_type::time_point> next_hold_check_;
  bool hold_check_due_ = false;
  std::thread thread_;
};

}  // namespace parley::http
