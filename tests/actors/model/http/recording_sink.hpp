#pragma once
// A sink that records what the HTTP client's I/O thread tells it, for tests
// to wait on and check from their own thread.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "actors/model/http/request.hpp"

namespace parley::http::testing {

class recording_sink : public sink {
  template <class F>
  auto locked(F f) {
    std::lock_guard<std::mutex> guard{mtx_};
    return f();
  }

 public:
  /// Called on the I/O thread after each recorded piece (optional).
  std::function<void(std::string_view)> after_body;

  void on_status(int code, const header_list& headers) override {
    std::lock_guard<std::mutex> guard{mtx_};
    ++status_calls_;
    status_ = code;
    headers_ = headers;
    if (!chunks_.empty() || done_) out_of_order_ = true;
    cv_.notify_all();
  }

  void on_body(std::string_view chunk) override {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (done_ || status_calls_ == 0) out_of_order_ = true;
      chunks_.emplace_back(chunk);
      body_ += chunk;
      cv_.notify_all();
    }
    if (after_body) after_body(chunk);
  }

  void on_done(const outcome& result) override {
    std::lock_guard<std::mutex> guard{mtx_};
    ++done_calls_;
    done_ = result;
    cv_.notify_all();
  }

  bool wait_done(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock{mtx_};
    return cv_.wait_for(lock, timeout, [this] { return done_.has_value(); });
  }

  bool wait_body(size_t bytes, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock{mtx_};
    return cv_.wait_for(lock, timeout, [&] { return body_.size() >= bytes; });
  }

  int status() { return locked([this] { return status_; }); }
  int status_calls() { return locked([this] { return status_calls_; }); }
  header_list headers() { return locked([this] { return headers_; }); }
  std::string body() { return locked([this] { return body_; }); }
  size_t chunk_count() { return locked([this] { return chunks_.size(); }); }
  outcome done() { return locked([this] { return done_.value_or(outcome{}); }); }
  int done_calls() { return locked([this] { return done_calls_; }); }
  /// A body before the status, or anything after on_done.
  bool out_of_order() { return locked([this] { return out_of_order_; }); }

 private:
  std::mutex mtx_;
  std::condition_variable cv_;
  int status_ = 0;
  int status_calls_ = 0;
  header_list headers_;
  std::vector<std::string> chunks_;
  std::string body_;
  std::optional<outcome> done_;
  int done_calls_ = 0;
  bool out_of_order_ = false;
};

}  // namespace parley::http::testing
