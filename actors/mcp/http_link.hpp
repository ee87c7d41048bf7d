#pragma once
// A streamable-HTTP MCP server (MCP 2025-03-26 and later): each message
// parley sends is a POST to the server's URL; the answer to a request comes
// back as one JSON body or as a stream of server-sent events (which may also
// carry the server's own requests and notifications before the answer); a
// notification or a response is accepted with 202 and no body. The session
// the server names in its answer to initialize (Mcp-Session-Id) goes with
// every later POST, as does the protocol version it agreed to.
//
// What the server sends reaches the actor as server_link says (one line per
// JSON-RPC message). HTTP's failures become what the actor already knows:
//   - initialize not answered (unreachable, refused, an error status): the
//     server is gone (atom::exited), so it is tried again after a backoff;
//   - unreachable, or the connection broken mid-answer: gone too;
//   - 404 once a session exists (or 400 naming the session, as servers on
//     the reference SDK's example answer): the server ended the session,
//     gone too (a restart initializes anew);
//   - any other request failed or answered with an error status: that
//     request's JSON-RPC error, built here ("HTTP 500: ..."), so the call
//     fails and the server stays;
//   - a message past 16 MiB: cut (atom::cut).
// The bodies are read on the shared HTTP client's I/O thread (no scheduler
// thread waits on the network); past 4 MiB handed to the actor and not yet
// handled, the transfers are paused until it catches up.
//
// Once initialized, the optional GET stream: an event stream the server may
// send its own requests and notifications on outside any POST. A server
// that offers none answers 405 and is never asked again. A stream that
// breaks or ends is opened again after the server's `retry:` time (1 s by
// default; doubled for each opening in a row that brought nothing, at most
// 30 s), with Last-Event-ID naming the last event received whole, so the
// server can replay what came after; after 5 fruitless openings in a row,
// never again (the POSTs go on). It is bounded as a POST's stream is, and
// its failures never end the session: the POSTs find out.
//
// Not done: resuming a broken POST stream (its request fails), OAuth.

#include <caf/actor.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "actors/mcp/server_link.hpp"
#include "actors/model/http/client.hpp"
#include "actors/model/http/request.hpp"

namespace parley::mcp {

struct http_spec {
  std::string url;
  /// Sent with every POST (the configured headers, resolved).
  http::header_list headers;
  /// Names the server in the log.
  std::string name;
  long connect_timeout_ms = 10'000;
};

/// "https://host:port" of a URL (no credentials, path, query or fragment):
/// what logs and statuses show of it.
std::string origin_of(const std::string& url);

class http_link final : public server_link {
 public:
  http_link(http_spec spec, std::shared_ptr<http::client> client, caf::actor sink,
            uint64_t generation);
  /// Aborts the transfers in flight; what they still deliver is dropped.
  ~http_link() override;
  http_link(const http_link&) = delete;
  http_link& operator=(const http_link&) = delete;

  bool send(std::string line) override;
  void consumed(size_t bytes) override;
  std::string describe() const override;
  void reopen() override;

  static constexpr size_t max_message_bytes = size_t{16} << 20;
  static constexpr size_t max_unhandled_bytes = size_t{4} << 20;
  /// Transfers in flight at once; past it a send fails (the server is cut off).
  static constexpr size_t max_in_flight = 1000;
  /// GET streams opened in a row that brought no event before the link
  /// stops asking for one.
  static constexpr int max_fruitless_streams = 5;

  struct shared;  // between the link and its transfers' sinks (http_link.cpp)

 private:
  /// Opens the GET stream unless it is open, refused (405) or given up.
  void open_stream();

  http_spec spec_;
  std::shared_ptr<http::client> client_;
  std::shared_ptr<shared> shared_;
};

}  // namespace parley::mcp
