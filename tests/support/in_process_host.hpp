#pragma once
// A host for in-process tests: records every event and ask, and answers
// approvals by a rule the test sets. Real runtime, real subprocesses.

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

#include "actors/embed/in_process_client.hpp"

namespace parley::test {

using namespace std::chrono_literals;

/// Records everything and answers approvals by a rule the test sets.
class recording_host : public in_process_client::handler {
 public:
  std::function<void(const approval_ask&, approval_reply)> decide;

  void on_notification(const protocol::notification& n) override {
    std::lock_guard<std::mutex> lock{mtx_};
    events_.push_back(n);
    cv_.notify_all();
  }
  void on_approval(const approval_ask& ask, approval_reply reply) override {
    {
      std::lock_guard<std::mutex> lock{mtx_};
      asks_.push_back(ask);
    }
    if (decide) decide(ask, reply);
  }
  void on_withdrawn(uint64_t key) override {
    std::lock_guard<std::mutex> lock{mtx_};
    withdrawn_.push_back(key);
    cv_.notify_all();
  }

  template <class T>
  std::vector<T> all() {
    std::lock_guard<std::mutex> lock{mtx_};
    std::vector<T> out;
    for (auto& e : events_)
      if (auto* x = std::get_if<T>(&e)) out.push_back(*x);
    return out;
  }

  /// Waits until `n` turns have completed.
  bool wait_turns(size_t n, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock<std::mutex> lock{mtx_};
    return cv_.wait_for(lock, timeout, [&] {
      size_t done = 0;
      for (auto& e : events_) done += std::holds_alternative<protocol::turn_completed>(e);
      return done >= n;
    });
  }

  size_t asks() {
    std::lock_guard<std::mutex> lock{mtx_};
    return asks_.size();
  }
  size_t withdrawn() {
    std::lock_guard<std::mutex> lock{mtx_};
    return withdrawn_.size();
  }

 private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<protocol::notification> events_;
  std::vector<approval_ask> asks_;
  std::vector<uint64_t> withdrawn_;
};

inline protocol::turn_start_params turn_params(const std::string& thread, const std::string& text) {
  protocol::turn_start_params p;
  p.thread_id = thread;
  p.input = {protocol::user_input::make_text(text)};
  return p;
}

inline std::string temp_dir(const std::string& name) {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("parley-inproc-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

}  // namespace parley::test
