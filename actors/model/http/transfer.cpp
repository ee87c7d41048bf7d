#include "actors/model/http/transfer.hpp"

#include <cctype>
#include <exception>

namespace parley::http {

namespace {

bool has_line_break(std::string_view text) {
  return text.find_first_of("\r\n") != std::string_view::npos;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0)
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0)
    text.remove_suffix(1);
  return text;
}

// "HTTP/1.1 429 Too Many Requests", "HTTP/2 200": the code after the first space.
int status_of(std::string_view status_line) {
  auto space = status_line.find(' ');
  if (space == std::string_view::npos) return 0;
  int code = 0;
  for (auto c : status_line.substr(space + 1, 3)) {
    if (c < '0' || c > '9') return 0;
    code = code * 10 + (c - '0');
  }
  return code;
}

}  // namespace

transfer::transfer(request_id id, request req, std::shared_ptr<http::sink> sink)
    : id_(id), req_(std::move(req)), sink_(std::move(sink)) {
  for (const auto& [name, value] : req_.headers) {
    if (has_line_break(name) || has_line_break(value) || name.empty()) {
      // Never quote the value: it may be the key.
      setup_error_ = "header \"" + redact(name, req_.headers) + "\" is empty or has a line break";
      return;
    }
  }
  easy_ = curl_easy_init();
  if (easy_ == nullptr) {
    setup_error_ = "curl_easy_init failed";
    return;
  }
  set_options();
}

transfer::~transfer() {
  if (easy_ != nullptr) curl_easy_cleanup(easy_);
  curl_slist_free_all(header_lines_);
}

void transfer::set_options() {
  for (const auto& [name, value] : req_.headers) {
    // "Name;" is curl's spelling of a header with an empty value ("Name:" would drop it).
    auto line = value.empty() ? name + ";" : name + ": " + value;
    header_lines_ = curl_slist_append(header_lines_, line.c_str());
  }
  // No "Expect: 100-continue" round trip before a large body.
  header_lines_ = curl_slist_append(header_lines_, "Expect:");
  curl_easy_setopt(easy_, CURLOPT_PRIVATE, this);
  curl_easy_setopt(easy_, CURLOPT_URL, req_.url.c_str());
  curl_easy_setopt(easy_, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, header_lines_);
  if (req_.method == verb::post) {
    curl_easy_setopt(easy_, CURLOPT_POST, 1L);
    curl_easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req_.body.size()));
    curl_easy_setopt(easy_, CURLOPT_POSTFIELDS, req_.body.data());
  } else {
    curl_easy_setopt(easy_, CURLOPT_HTTPGET, 1L);
  }
  curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS, req_.connect_timeout_ms);
  if (!req_.ca_file.empty()) curl_easy_setopt(easy_, CURLOPT_CAINFO, req_.ca_file.c_str());
  // Other threads run beside this one: no SIGALRM for timeouts.
  curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
  // Streams sit idle between events for long: keep NATs and proxies from dropping them.
  curl_easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
  // No CURLOPT_PIPEWAIT: with it, libcurl 7.88 held every other request to an
  // HTTP/1.1 host back until the first stream on it had ended (seen in the
  // thousand-streams test). Without it a burst opens a connection each; once
  // an HTTP/2 connection is up, later requests share it.
  curl_easy_setopt(easy_, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  curl_easy_setopt(easy_, CURLOPT_ERRORBUFFER, curl_error_);
  curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &transfer::on_header_line);
  curl_easy_setopt(easy_, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &transfer::on_body_piece);
  curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this);
  // Deliberately not set: CURLOPT_PROXY (libcurl then takes http_proxy,
  // https_proxy, all_proxy and no_proxy from the environment) and
  // CURLOPT_VERBOSE (its trace would print the Authorization header).
}

size_t transfer::on_header_line(char* data, size_t size, size_t count, void* self) {
  auto& t = *static_cast<transfer*>(self);
  t.header_line(trim(std::string_view(data, size * count)));
  return t.sink_error_.empty() ? size * count : 0;
}

size_t transfer::on_body_piece(char* data, size_t size, size_t count, void* self) {
  auto& t = *static_cast<transfer*>(self);
  if (!t.deliver_status()) return 0;
  if (t.paused_) {
    // Held (client::pause) before curl could be told: curl_easy_pause
    // refuses a transfer that has no connection yet (libcurl 7.88:
    // CURLE_BAD_FUNCTION_ARGUMENT), so a request that starts held is paused
    // here, at its first piece, which curl keeps for the resume.
    return CURL_WRITEFUNC_PAUSE;
  }
  if (!t.sink_->ready()) {
    // curl keeps the piece and hands it again once unpaused.
    t.flow_paused_ = true;
    return CURL_WRITEFUNC_PAUSE;
  }
  return t.deliver_body(std::string_view(data, size * count)) ? size * count : 0;
}

void transfer::header_line(std::string_view line) {
  if (status_sent_) return;  // trailers after a chunked body
  if (line.empty()) {
    // The end of one response's headers; a 1xx is followed by the real one.
    if (status_ >= 200) {
      deliver_status();
    } else {
      status_ = 0;
      response_headers_.clear();
    }
  } else if (line.substr(0, 5) == "HTTP/") {
    status_ = status_of(line);
    response_headers_.clear();
  } else if (line.front() == ' ' || line.front() == '\t') {
    if (!response_headers_.empty()) response_headers_.back().second += " " + std::string(trim(line));
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    response_headers_.emplace_back(std::string(trim(line.substr(0, colon))),
                                   std::string(trim(line.substr(colon + 1))));
  }
}

bool transfer::deliver_status() {
  if (status_sent_) return true;
  status_sent_ = true;
  try {
    sink_->on_status(status_, response_headers_);
  } catch (const std::exception& e) {
    sink_error_ = std::string("the sink's on_status threw: ") + e.what();
  } catch (...) {
    sink_error_ = "the sink's on_status threw";
  }
  response_headers_.clear();
  response_headers_.shrink_to_fit();
  return sink_error_.empty();
}

bool transfer::deliver_body(std::string_view piece) {
  if (!deliver_status()) return false;
  try {
    sink_->on_body(piece);
    return true;
  } catch (const std::exception& e) {
    sink_error_ = std::string("the sink's on_body threw: ") + e.what();
  } catch (...) {
    sink_error_ = "the sink's on_body threw";
  }
  return false;
}

outcome transfer::outcome_of(CURLcode code) const {
  outcome out;
  if (!sink_error_.empty()) {
    out.result = outcome::kind::failed;
    out.message = redact(sink_error_, req_.headers);
  } else if (code != CURLE_OK) {
    out.result = outcome::kind::failed;
    out.message = curl_easy_strerror(code);
    if (curl_error_[0] != '\0') out.message += std::string(": ") + curl_error_;
    out.message = redact(std::move(out.message), req_.headers);
  }
  return out;
}

void transfer::admitted() {
  try {
    sink_->on_admitted();
  } catch (...) {
    // Only a hint for the caller's clock; the transfer goes on.
  }
}

void transfer::finish(const outcome& result) {
  if (finished_) return;
  finished_ = true;
  // A response without a body (204, HEAD) still had its status.
  if (result.ok() && !status_sent_ && status_ != 0) deliver_status();
  try {
    sink_->on_done(result);
  } catch (...) {
    // Documented: dropped. The transfer is over either way.
  }
}

}  // namespace parley::http
