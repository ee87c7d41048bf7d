#pragma once
// How a server's actor reaches its server: a stdio child (stdio_child.hpp)
// or a streamable-HTTP endpoint (http_link.hpp). Either hands what the server
// sends to the actor as the same messages, tagged with the start's
// generation:
//
//   (atom::line, gen, line)     one JSON-RPC message of the server's
//   (atom::cut, gen, reason)    it broke the framing (a message past the bound)
//   (atom::exited, gen, how)    it is gone (the process ended, the endpoint
//                               unreachable or its session ended)
//   (atom::reopen, gen)         (HTTP) time to open its GET stream again:
//                               the actor calls reopen()

#include <cstddef>
#include <string>

namespace parley::mcp {

class server_link {
 public:
  virtual ~server_link() = default;
  /// Sends one JSON-RPC message (one line, no newline). False when the
  /// server has fallen too far behind in taking them (the caller cuts it
  /// off).
  virtual bool send(std::string line) = 0;
  /// The actor has handled a line of `bytes`: it no longer counts against
  /// the bound on what is handed over and not yet handled.
  virtual void consumed(size_t bytes) = 0;
  /// For the log: "pid=123" or "url=https://host".
  virtual std::string describe() const = 0;
  /// The delay a link asked for (atom::reopen) is over: what was waiting
  /// for it goes on. Nothing waits on a stdio child.
  virtual void reopen() {}
};

}  // namespace parley::mcp
