#pragma once
// One request as a libcurl easy handle: its options, the callbacks that turn
// curl's header lines and body pieces into sink calls, and the outcome of its
// end. Private to the client (client.cpp): a transfer is built on the
// caller's thread and then used only by the I/O thread.

#include <curl/curl.h>
#include <memory>
#include <string>

#include "actors/model/http/request.hpp"

namespace parley::http {

class transfer {
 public:
  /// Sets `req` up on a new easy handle. A request that cannot be sent (no
  /// easy handle, a line break in a header) gets no handle: setup_error()
  /// says why, and the I/O thread reports it without touching the network.
  transfer(request_id id, request req, std::shared_ptr<http::sink> sink);
  ~transfer();
  transfer(const transfer&) = delete;
  transfer& operator=(const transfer&) = delete;

  request_id id() const { return id_; }
  CURL* easy() const { return easy_; }
  const std::string& setup_error() const { return setup_error_; }
  const request& req() const { return req_; }

  /// Tells the sink it starts now (at once, or after waiting for its gate).
  void admitted();

  /// Whether its response is not to be read now (client::pause; I/O thread).
  /// Two causes share curl's one pause state, this hold and the sink's lack
  /// of room (flow_paused): the transfer reads again only once both are gone.
  bool paused() const { return paused_; }
  void set_paused(bool hold) { paused_ = hold; }
  /// Whether its sink said it had no room (sink::ready), pausing it until
  /// client::flow (I/O thread).
  bool flow_paused() const { return flow_paused_; }
  void clear_flow_paused() { flow_paused_ = false; }

  /// What curl's result means for the caller, header values redacted.
  outcome outcome_of(CURLcode code) const;

  /// Hands `result` to the sink (once; later calls do nothing).
  void finish(const outcome& result);

 private:
  static size_t on_header_line(char* data, size_t size, size_t count, void* self);
  static size_t on_body_piece(char* data, size_t size, size_t count, void* self);
  void set_options();
  void header_line(std::string_view line);
  bool deliver_status();
  bool deliver_body(std::string_view piece);

  request_id id_;
  request req_;
  std::shared_ptr<http::sink> sink_;
  CURL* easy_ = nullptr;
  curl_slist* header_lines_ = nullptr;
  std::string setup_error_;
  int status_ = 0;
  header_list response_headers_;
  bool status_sent_ = false;
  bool finished_ = false;
  bool paused_ = false;
  bool flow_paused_ = false;
  std::string sink_error_;  // what a throwing sink said; fails the transfer
  char curl_error_[CURL_ERROR_SIZE] = {};
};

}  // namespace parley::http
