#pragma once
// The streaming HTTP client that every model turn shares: one I/O thread of
// its own runs a libcurl multi handle on epoll (CURLMOPT_SOCKETFUNCTION and
// CURLMOPT_TIMERFUNCTION), and carries thousands of concurrent requests. No
// scheduler thread ever waits on the network; start() and abort() only queue
// a command and wake the thread (an eventfd), like the process reactor.
//
// Why libcurl's multi interface on our own epoll thread rather than Boost.Beast:
// libcurl brings what Beast leaves to us, each a source of bugs of its own:
// TLS with certificate and host checks (OpenSSL, the system's CAs), HTTP(S)
// proxies from the environment, a connection cache that reuses connections
// across requests, HTTP/2 multiplexing where the server offers it (ALPN), and
// chunked decoding. The multi socket API leaves the waiting to us, so one
// thread serves every stream, and curl has no thread or event loop of its own
// to stop.
//
// Proxies: nothing here sets CURLOPT_PROXY, so libcurl reads http_proxy
// (lower case only), https_proxy / HTTPS_PROXY, all_proxy / ALL_PROXY and
// no_proxy / NO_PROXY from the environment itself. Whoever runs parley behind
// a proxy sets those.
//
// An aborted transfer's connection is closed (an HTTP/1.1 connection with a
// response half read cannot be reused); over HTTP/2 only its stream is reset.
// Nothing here logs; no header value ever appears in an outcome's message.

#include <atomic>
#include <cstddef>
#include <memory>

#include "actors/model/http/request.hpp"

namespace parley::http {

class client {
 public:
  /// Starts the I/O thread. Throws std::runtime_error if it cannot (no epoll,
  /// no eventfd, no curl multi handle).
  client();
  /// shutdown().
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Queues `req` and returns at once; `sink` hears its response on the I/O
  /// thread (see sink in request.hpp). Thread-safe. After shutdown the sink
  /// hears on_done(aborted) at once, on the calling thread. Throws
  /// std::invalid_argument for a null sink. A request with a gate
  /// (request::gate) past its cap waits, fairly, and starts when one of the
  /// gate's requests ends (see fair_gate.hpp); abort() takes it from there too.
  request_id start(request req, std::shared_ptr<sink> sink);

  /// Stops request `id` and returns at once. Thread-safe. Once the I/O thread
  /// has taken the abort, the transfer is gone: no more on_body, and its sink
  /// hears on_done(aborted) exactly once, unless it had finished already (then
  /// nothing happens). Unknown ids are ignored.
  void abort(request_id id);

  /// Stops reading request `id`'s response (`hold`), or reads it again, and
  /// returns at once. Thread-safe. Backpressure (issue 22): a paused
  /// transfer's socket is not read, so the server's writes stall once the
  /// kernel's buffers are full; nothing is lost, nothing buffered here. A
  /// request still waiting for its gate starts paused. Unknown ids are
  /// ignored. A request held past its request::hold_release_ms while another
  /// waits for its gate ends released (outcome::kind::released), its slot
  /// given to the waiting one; otherwise a pause never ends a request.
  void pause(request_id id, bool hold);

  /// Request `id`'s sink has room again (it said it had none: sink::ready):
  /// its transfer is read again unless held by pause(). Thread-safe; returns
  /// at once; does nothing for a transfer that is not waiting on its sink.
  void flow(request_id id);

  /// Aborts every request (their sinks hear on_done(aborted)), closes every
  /// connection and joins the I/O thread. Idempotent; not from a sink.
  void shutdown();

  /// Transfers on the I/O thread now: started and not yet done (a debugging
  /// and test figure; commands still queued are not counted).
  std::size_t live_transfers() const;
  /// Requests waiting for their gate's cap (request::gate), not yet started.
  std::size_t queued_requests() const;

 private:
  class io_loop;
  std::unique_ptr<io_loop> loop_;
};

}  // namespace parley::http
