#include "actors/model/http/client.hpp"

#include <stdexcept>

#include "actors/model/http/io_loop.hpp"

namespace parley::http {

client::client() : loop_(std::make_unique<io_loop>()) {}

client::~client() { shutdown(); }

request_id client::start(request req, std::shared_ptr<sink> sink) {
  if (!sink) throw std::invalid_argument("http::client::start: no sink");
  auto id = loop_->next_id();
  // The easy handle is set up here, off the I/O thread: it touches no socket.
  auto t = std::make_unique<transfer>(id, std::move(req), sink);
  if (!loop_->post_start(std::move(t)))
    sink->on_done({outcome::kind::aborted, "aborted: the HTTP client shut down"});
  return id;
}

void client::abort(request_id id) { loop_->post_abort(id); }

void client::pause(request_id id, bool hold) { loop_->post_pause(id, hold); }

void client::flow(request_id id) { loop_->post_flow(id); }

void client::shutdown() { loop_->stop(); }

std::size_t client::live_transfers() const { return loop_->live(); }

std::size_t client::queued_requests() const { return loop_->queued(); }

}  // namespace parley::http
